with Ada.Command_Line;
with Ada.Environment_Variables;

package body Renard.Config is

   type Flag is
     (Listen, Count, Location, Threads, Header_Timeout, Idle_Timeout, Max_Connections,
      Drain_Timeout);

   function Flag_Name (F : Flag) return String is
     (case F is
         when Listen => "--listen", when Count => "--count", when Location => "--location",
         when Threads => "--threads", when Header_Timeout => "--header-timeout",
         when Idle_Timeout => "--idle-timeout", when Max_Connections => "--max-connections",
         when Drain_Timeout => "--drain-timeout");

   function Variable_Name (F : Flag) return String is
     (case F is
         when Listen => "RENARD_LISTEN", when Count => "RENARD_COUNT",
         when Location => "RENARD_LOCATION", when Threads => "RENARD_THREADS",
         when Header_Timeout => "RENARD_HEADER_TIMEOUT",
         when Idle_Timeout => "RENARD_IDLE_TIMEOUT",
         when Max_Connections => "RENARD_MAX_CONNECTIONS",
         when Drain_Timeout => "RENARD_DRAIN_TIMEOUT");

   function Default (F : Flag) return String is
     (case F is
         when Listen => "127.0.0.1:8080", when Count => "21",
         when Location => "https://avatar.example.org/Renard-{n}.png", when Threads => "",
         when Header_Timeout => "10", when Idle_Timeout => "60",
         when Max_Connections => "10000", when Drain_Timeout => "1");

   function Is_Digit (C : Character) return Boolean is (C in '0' .. '9');

   --  S in double quotes, unprintable characters escaped (\n, \t, \r, \xNN).
   function Quoted (S : String) return String is
      Hex    : constant String := "0123456789abcdef";
      Result : String (1 .. 4 * S'Length + 2);
      Last   : Natural := 1;
      procedure Add (T : String) is
      begin
         Result (Last + 1 .. Last + T'Length) := T;
         Last := Last + T'Length;
      end Add;
   begin
      Result (1) := '"';
      for C of S (S'First .. Integer'Min (S'Last, S'First + 199)) loop
         case C is
            when ASCII.LF => Add ("\n");
            when ASCII.HT => Add ("\t");
            when ASCII.CR => Add ("\r");
            when '"' | '\' => Add ('\' & C);
            when ' ' | '!' | '#' .. '[' | ']' .. '~' => Add ((1 => C));
            when others =>
               Add ("\x" & Hex (Character'Pos (C) / 16 + 1) & Hex (Character'Pos (C) mod 16 + 1));
         end case;
      end loop;
      Add ("""");
      return Result (1 .. Last);
   end Quoted;

   --  A decimal integer from 1 to Max, digits only.
   function To_Integer (V : String; Max : Positive; N : out Natural) return Boolean is
   begin
      N := 0;
      if V'Length not in 1 .. 9 or else not (for all C of V => Is_Digit (C)) then
         return False;
      end if;
      N := Natural'Value (V);
      return N in 1 .. Max;
   end To_Integer;

   --  Where the first C of S stands (the last, when Last); 0 when S has none. Not
   --  Ada.Strings.Fixed.Index: it brings 12 KB of the runtime into the binary for this.
   function Index_Of (S : String; C : Character; Last : Boolean := False) return Natural is
   begin
      for K in 0 .. S'Length - 1 loop
         declare
            I : constant Positive := (if Last then S'Last - K else S'First + K);
         begin
            if S (I) = C then
               return I;
            end if;
         end;
      end loop;
      return 0;
   end Index_Of;

   --  DIGITS[.DIGITS], at most 86400 s, in nanoseconds; a positive value below a
   --  nanosecond is one nanosecond, so that only an exact zero is zero.
   function To_Seconds (V : String; T : out Nanoseconds) return Boolean is
      Dot   : constant Natural := Index_Of (V, '.');
      Whole : Nanoseconds := 0;
      Frac  : Nanoseconds := 0;
      Scale : Nanoseconds := Second;
      Nonzero_Fraction : Boolean := False;
   begin
      T := 0;
      declare
         Whole_Part : constant String :=
           (if Dot = 0 then V else V (V'First .. Dot - 1));
      begin
         if Whole_Part'Length not in 1 .. 5 or else not (for all C of Whole_Part => Is_Digit (C))
         then
            return False;
         end if;
         Whole := Nanoseconds'Value (Whole_Part);
      end;
      if Dot /= 0 then
         if Dot = V'Last then
            return False;
         end if;
         for C of V (Dot + 1 .. V'Last) loop
            if not Is_Digit (C) then
               return False;
            end if;
            if Scale > 1 then
               Scale := Scale / 10;
               Frac := Frac + Scale * Nanoseconds (Character'Pos (C) - Character'Pos ('0'));
            end if;
            if C /= '0' then
               Nonzero_Fraction := True;
            end if;
         end loop;
      end if;
      T := Whole * Second + Frac;
      if T > Max_Seconds then
         return False;
      end if;
      if T = 0 and Nonzero_Fraction then
         T := 1;
      end if;
      return True;
   end To_Seconds;

   --  Numeric A.B.C.D:PORT or [IPv6]:PORT, PORT 0-65535.
   function To_Listen (V : String; A : out OS.Socket_Address) return Boolean is
      Colon : constant Natural := Index_Of (V, ':', Last => True);
   begin
      A := (others => <>);
      if Colon = 0 or else Colon = V'Last or else V'Last - Colon > 5
        or else not (for all C of V (Colon + 1 .. V'Last) => Is_Digit (C))
      then
         return False;
      end if;
      declare
         Port : constant Natural := Natural'Value (V (Colon + 1 .. V'Last));
         Host : String renames V (V'First .. Colon - 1);
      begin
         if Port > 65_535 or Host'Length = 0 then
            return False;
         elsif Host (Host'First) = '[' then
            return Host'Length >= 3 and then Host (Host'Last) = ']'
              and then OS.To_Address (Host (Host'First + 1 .. Host'Last - 1), True, Port, A);
         else
            return OS.To_Address (Host, False, Port, A);
         end if;
      end;
   end To_Listen;

   --  Validate one value into S: "" or the reason it is refused.
   function Apply (F : Flag; V : String; S : in out Settings) return String is
      N : Natural;
      T : Nanoseconds;
      Seconds_Reason : constant String :=
        "must be a decimal number of seconds greater than 0 and at most 86400";
   begin
      case F is
         when Listen =>
            return (if To_Listen (V, S.Listen) then ""
                    else "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535");
         when Count =>
            if not To_Integer (V, Max_Count, N) then
               return "must be an integer from 1 to 1000000";
            end if;
            S.Count := Image_Count (N);
         when Location =>
            if V'Length not in 1 .. Responses.Max_Template then
               return "must be 1 to 2048 octets long";
            elsif (for some C of V => C not in '!' .. '~') then
               return "must be visible ASCII only (0x21-0x7E: no space, no control octets)";
            elsif (for all I in V'First .. V'Last - 2 => V (I .. I + 2) /= "{n}") then
               return "must contain {n}";
            end if;
            S.Location (1 .. V'Length) := V;
            S.Location_Length := V'Length;
         when Threads =>
            if not To_Integer (V, Thread_Count'Last, N) then
               return "must be an integer from 1 to 1024";
            end if;
            S.Threads := N;
         when Header_Timeout | Idle_Timeout =>
            if not To_Seconds (V, T) or else T = 0 then
               return Seconds_Reason;
            end if;
            if F = Header_Timeout then
               S.Header_Timeout := T;
            else
               S.Idle_Timeout := T;
            end if;
         when Max_Connections =>
            if not To_Integer (V, Connection_Cap'Last, N) then
               return "must be an integer from 1 to 1000000";
            end if;
            S.Max_Connections := N;
         when Drain_Timeout =>
            if not To_Seconds (V, T) then
               return "must be a decimal number of seconds from 0 to 86400";
            end if;
            S.Drain_Timeout := T;
      end case;
      return "";
   end Apply;

   procedure Read
     (CPUs : Positive; Result : out Command; S : out Settings; Error : out String;
      Error_Length : out Natural)
   is
      package CL renames Ada.Command_Line;
      Given : array (Flag) of Natural := (others => 0);  --  argument index of the value
      Given_Inline : array (Flag) of Natural := (others => 0);  --  index of '=' + 1
      I : Positive := 1;

      procedure Fail (Line : String) is
         L : constant String :=
           Line (Line'First .. Integer'Min (Line'Last, Line'First + Error'Length - 1));
      begin
         Error (Error'First .. Error'First + L'Length - 1) := L;
         Error_Length := L'Length;
         Result := Refuse;
      end Fail;

      function Printable (T : String) return String is
         R : String := T (T'First .. Integer'Min (T'Last, T'First + 99));
      begin
         for C of R loop
            if C < ' ' or C = ASCII.DEL then
               C := '?';
            end if;
         end loop;
         return R;
      end Printable;
   begin
      S := (Listen => <>, Location => (others => ' '), others => <>);
      S.Threads := Integer'Min (CPUs, Thread_Count'Last);
      Error := (others => ' ');
      Error_Length := 0;
      Result := Serve;
      while I <= CL.Argument_Count loop
         declare
            Arg : constant String := CL.Argument (I);
            Eq  : constant Natural := Index_Of (Arg, '=');
            Found : Boolean := False;
         begin
            if Arg = "--help" then
               Result := Show_Help;
               return;
            elsif Arg = "--version" then
               Result := Show_Version;
               return;
            elsif Arg'Length < 2 or else Arg (Arg'First .. Arg'First + 1) /= "--" then
               Fail ("renard: " & Quoted (Arg)
                     & ": unexpected argument (renard takes only flags; see --help)");
               return;
            end if;
            declare
               Name : constant String := (if Eq = 0 then Arg else Arg (Arg'First .. Eq - 1));
            begin
               for F in Flag loop
                  if Name = Flag_Name (F) then
                     Found := True;
                     if Eq /= 0 then
                        Given (F) := I;
                        Given_Inline (F) := Eq + 1 - Arg'First + 1;
                     elsif I < CL.Argument_Count then
                        I := I + 1;
                        Given (F) := I;
                        Given_Inline (F) := 0;
                     else
                        Fail ("renard: " & Flag_Name (F) & ": missing value");
                        return;
                     end if;
                  end if;
               end loop;
               if not Found then
                  Fail ("renard: " & Printable (Name) & ": unknown flag (see --help)");
                  return;
               end if;
            end;
         end;
         I := I + 1;
      end loop;
      for F in Flag loop
         declare
            function Value return String is
            begin
               if Given (F) /= 0 then
                  declare
                     Arg : constant String := CL.Argument (Given (F));
                  begin
                     return (if Given_Inline (F) = 0 then Arg
                             else Arg (Arg'First + Given_Inline (F) - 1 .. Arg'Last));
                  end;
               end if;
               return Ada.Environment_Variables.Value (Variable_Name (F), "");
            end Value;
            V : constant String := Value;
            From_Variable : constant Boolean := Given (F) = 0 and V'Length > 0;
            Name : constant String := (if From_Variable then Variable_Name (F) else Flag_Name (F));
         begin
            if Given (F) /= 0 or From_Variable then
               declare
                  Reason : constant String := Apply (F, V, S);
               begin
                  if Reason /= "" then
                     Fail ("renard: " & Name & ": " & Reason & " (got " & Quoted (V) & ")");
                     return;
                  end if;
               end;
            elsif Default (F) /= "" then
               declare
                  Reason : constant String := Apply (F, Default (F), S);
               begin
                  pragma Assert (Reason = "");
               end;
            end if;
         end;
      end loop;
   end Read;

end Renard.Config;
