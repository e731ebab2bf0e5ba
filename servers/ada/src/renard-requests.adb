--  One pass over a head, each octet looked at once, resumable across reads: Progress
--  keeps the position and everything learned so far. Rules 1-6 are checked at the octet
--  that decides them; rules 7-9 need the whole head and are applied at its empty line,
--  from facts gathered on the way. The same machine as the flagship's and the C entry's.
with Interfaces;

package body Renard.Requests is

   use type Interfaces.Unsigned_8;

   CR : constant Octet := 13;
   LF : constant Octet := 10;
   SP : constant Octet := 32;
   HT : constant Octet := 9;

   function Ch (C : Character) return Octet is (Character'Pos (C));

   function Is_Alnum (B : Octet) return Boolean is
     (B in Ch ('0') .. Ch ('9') | Ch ('a') .. Ch ('z') | Ch ('A') .. Ch ('Z'));
   function Is_Digit (B : Octet) return Boolean is (B in Ch ('0') .. Ch ('9'));

   type Octet_Class is array (Octet) of Boolean;

   --  RFC 9110 token characters.
   Is_TChar : constant Octet_Class :=
     (for B in Octet =>
        Is_Alnum (B)
        or else (B < 128 and then Character'Val (B) in
                   '!' | '#' | '$' | '%' | '&' | ''' | '*' | '+' | '-' | '.' | '^' | '_'
                   | '`' | '|' | '~'));
   --  Target octets: visible ASCII (rule 3).
   Is_VChar : constant Octet_Class := (for B in Octet => B in 16#21# .. 16#7E#);
   --  Optional whitespace.
   Is_OWS : constant Octet_Class := (for B in Octet => B in SP | HT);
   --  SP, HTAB, VCHAR, obs-text (rule 5).
   Is_Field_Value : constant Octet_Class :=
     (for B in Octet => B in 16#21# .. 16#7E# | SP | HT | 16#80# .. 16#FF#);
   --  RFC 3986 unreserved, sub-delims and '%' (rule 7).
   Is_Host_Char : constant Octet_Class :=
     (for B in Octet =>
        Is_Alnum (B)
        or else (B < 128 and then Character'Val (B) in
                   '-' | '.' | '_' | '~' | '!' | '$' | '&' | ''' | '(' | ')' | '*' | '+'
                   | ',' | ';' | '=' | '%'));

   HTTP_Slash : constant Octets (0 .. 4) := (72, 84, 84, 80, 47);  --  "HTTP/"

   --  S equals the lowercase Word, ignoring ASCII case. Word is letters, digits and
   --  "-:/" only, and S has no control octet but HTAB, so that setting bit 0x20 folds
   --  the case of S without making any other octet equal a character of Word.
   function Equals_Word (S : Octets; Word : String) return Boolean is
   begin
      if S'Length /= Word'Length then
         return False;
      end if;
      for I in S'Range loop
         if (S (I) or 16#20#) /= Ch (Word (I - S'First + Word'First)) then
            return False;
         end if;
      end loop;
      return True;
   end Equals_Word;

   function Equals (S : Octets; Word : String) return Boolean is
     (S'Length = Word'Length
      and then (for all I in 0 .. S'Length - 1 => S (S'First + I) = Ch (Word (Word'First + I))));

   --  The bounds of S without SP or HTAB at either end.
   procedure Trim (S : Octets; First : out Natural; Last : out Integer) is
   begin
      First := S'First;
      Last := S'Last;
      while First <= Last and then S (First) in SP | HT loop
         First := First + 1;
      end loop;
      while Last >= First and then S (Last) in SP | HT loop
         Last := Last - 1;
      end loop;
   end Trim;

   function Field_Kind (Name : Octets) return Field is
     (case Name'Length is
         when 4 => (if Equals_Word (Name, "host") then Host else Other),
         when 6 => (if Equals_Word (Name, "expect") then Expect else Other),
         when 10 => (if Equals_Word (Name, "connection") then Connection else Other),
         when 14 => (if Equals_Word (Name, "content-length") then Content_Length else Other),
         when 17 =>
           (if Equals_Word (Name, "transfer-encoding") then Transfer_Encoding else Other),
         when others => Other);

   --  Rule 7: empty, or host [":" port], host a reg-name/IPv4 or an IP-literal in
   --  brackets, port zero or more digits.
   function Is_Valid_Host (V : Octets) return Boolean is
      I : Natural := V'First;
   begin
      if V'Length = 0 then
         return True;
      end if;
      if V (I) = Ch ('[') then
         I := I + 1;
         while I <= V'Last and then V (I) /= Ch (']') loop
            if not ((Is_Host_Char (V (I)) and V (I) /= Ch ('%')) or V (I) = Ch (':')) then
               return False;
            end if;
            I := I + 1;
         end loop;
         if I > V'Last or else I = V'First + 1 then
            return False;
         end if;
         I := I + 1;
      else
         I := V'Last + 1;
         for J in V'Range loop
            if V (J) = Ch (':') then
               I := J;
               exit;
            elsif not Is_Host_Char (V (J)) then
               return False;
            end if;
         end loop;
      end if;
      if I > V'Last then
         return True;
      end if;
      if V (I) /= Ch (':') then
         return False;
      end if;
      return (for all J in I + 1 .. V'Last => Is_Digit (V (J)));
   end Is_Valid_Host;

   --  Content-Length: 1 to 18 digits, nothing else (rule 8).
   procedure Read_Content_Length (V : Octets; Valid : out Boolean; Length : out Body_Length) is
   begin
      Length := 0;
      Valid := V'Length in 1 .. 18 and then (for all B of V => Is_Digit (B));
      if Valid then
         for B of V loop
            Length := Length * 10 + Body_Length (B - Ch ('0'));
         end loop;
      end if;
   end Read_Content_Length;

   --  Record what the field line just read says; Value is OWS-trimmed, a slice of Input.
   procedure Note_Field (P : in out Progress; Base : Natural; Value : Octets) is
      F : Facts renames P.Known;
   begin
      case P.Current is
         when Other =>
            null;
         when Host =>
            F.Host_Lines := Line_Count'Min (F.Host_Lines + 1, Line_Count'Last);
            if not Is_Valid_Host (Value) then
               F.Bad_Host := True;
            end if;
         when Content_Length =>
            F.Content_Length_Lines := Line_Count'Min (F.Content_Length_Lines + 1, Line_Count'Last);
            Read_Content_Length (Value, F.Content_Length_Valid, F.Content_Length);
         when Transfer_Encoding =>
            F.Transfer_Encoding_Lines :=
              Line_Count'Min (F.Transfer_Encoding_Lines + 1, Line_Count'Last);
            F.TE_Start := Value'First - Base;
            F.TE_End := Value'First - Base + Value'Length;
         when Connection =>
            declare
               Start : Natural := Value'First;
               First : Natural;
               Last  : Integer;
            begin
               for K in Value'First .. Value'Last + 1 loop
                  if K > Value'Last or else Value (K) = Ch (',') then
                     Trim (Value (Start .. K - 1), First, Last);
                     if Equals_Word (Value (First .. Last), "close") then
                        F.Close := True;
                     elsif Equals_Word (Value (First .. Last), "keep-alive") then
                        F.Keep_Alive := True;
                     end if;
                     Start := K + 1;
                  end if;
               end loop;
            end;
         when Expect =>
            F.Expect_Continue := Equals_Word (Value, "100-continue");
      end case;
   end Note_Field;

   --  Rule 8 on a Transfer-Encoding value: OK when it is exactly `chunked`.
   function Check_Codings (V : Octets; Status : out Reject) return Boolean is
      Start : Natural := V'First;
      Count : Natural := 0;
      First, Last_First : Natural := V'First;
      Last, Last_Last   : Integer := V'First - 1;
   begin
      Status := Bad_Request;
      for K in V'First .. V'Last + 1 loop
         if K > V'Last or else V (K) = Ch (',') then
            Trim (V (Start .. K - 1), First, Last);
            if Last < First then
               return False;
            end if;
            Count := Count + 1;
            Last_First := First;
            Last_Last := Last;
            Start := K + 1;
         end if;
      end loop;
      if not Equals_Word (V (Last_First .. Last_Last), "chunked") then
         return False;
      end if;
      if Count > 1 then
         Status := Not_Implemented;
         return False;
      end if;
      return True;
   end Check_Codings;

   --  The path and path-and-query of an origin-form or absolute-form target (SPEC §2);
   --  False for any other form. An absolute-form target without a path has the path "/".
   procedure Split_Target
     (T : Octets; OK : out Boolean; Path_First : out Natural; Path_Last : out Integer;
      Query_First : out Natural)
   is
      PQ : Natural := T'First;
   begin
      OK := False;
      Path_First := T'First;
      Path_Last := T'First - 1;
      Query_First := T'First;
      if T (T'First) /= Ch ('/') then
         declare
            Skip : Natural;
         begin
            if T'Length >= 7 and then Equals_Word (T (T'First .. T'First + 6), "http://") then
               Skip := 7;
            elsif T'Length >= 8 and then Equals_Word (T (T'First .. T'First + 7), "https://")
            then
               Skip := 8;
            else
               return;
            end if;
            PQ := T'First + Skip;
            while PQ <= T'Last and then T (PQ) not in Ch ('/') | Ch ('?') | Ch ('#') loop
               PQ := PQ + 1;
            end loop;
            if PQ = T'First + Skip then
               return;
            end if;
         end;
      end if;
      OK := True;
      Path_First := PQ;
      Query_First := PQ;
      Path_Last := PQ - 1;
      while Path_Last < T'Last and then T (Path_Last + 1) /= Ch ('?') loop
         Path_Last := Path_Last + 1;
      end loop;
   end Split_Target;

   --  Rules 7-9 on the head In_Head (its first Head_Length octets passed rules 1-6).
   function Finish (H : Octets; P : Progress; Head_Length : Head_Position) return Parse_Result is
      F   : Facts renames P.Known;
      R   : Request;
      Bad : constant Parse_Result := (Kind => Error, Status => Bad_Request);
      Status  : Reject;
      Chunked : Boolean := False;
   begin
      if F.Bad_Host or F.Host_Lines > 1 or (not P.HTTP_1_0 and F.Host_Lines = 0) then
         return Bad;
      end if;
      if F.Content_Length_Lines > 1
        or (F.Content_Length_Lines = 1 and not F.Content_Length_Valid)
      then
         return Bad;
      end if;
      if F.Transfer_Encoding_Lines > 0 then
         if F.Content_Length_Lines > 0 or P.HTTP_1_0 or F.Transfer_Encoding_Lines > 1 then
            return Bad;
         end if;
         if not Check_Codings (H (H'First + F.TE_Start .. H'First + F.TE_End - 1), Status) then
            return (Kind => Error, Status => Status);
         end if;
         Chunked := True;
      end if;
      declare
         Method : Octets renames H (H'First .. H'First + P.Method_End - 1);
         Target : Octets renames H (H'First + P.Method_End + 1 .. H'First + P.Target_End - 1);
         OK : Boolean;
         Path_First, Query_First : Natural;
         Path_Last : Integer;
      begin
         Split_Target (Target, OK, Path_First, Path_Last, Query_First);
         if not OK then
            return Bad;
         end if;
         declare
            Path   : Octets renames Target (Path_First .. Path_Last);
            Get    : constant Boolean := Equals (Method, "GET");
            Head   : constant Boolean := Equals (Method, "HEAD");
            Root   : constant Boolean := Path'Length = 0 or else Equals (Path, "/");
            Healthz : constant Boolean := Equals (Path, "/healthz");
         begin
            if Root and (Get or Head) then
               R.Target := Redirect;
               Seeds.Find_Seed (Target (Query_First .. Target'Last), R.Seeded, R.Seed_Hash);
            elsif Healthz and (Get or Head) then
               R.Target := Health;
            elsif Root or Healthz then
               R.Target := Method_Not_Allowed;
            else
               R.Target := Not_Found;
            end if;
            R.Head_Method := Head;
         end;
      end;
      R.Head_Length := Head_Length;
      R.HTTP_1_0 := P.HTTP_1_0;
      R.Keep_Alive := not F.Close and (not P.HTTP_1_0 or F.Keep_Alive);
      R.Content_Length := (if F.Content_Length_Lines = 1 then F.Content_Length else 0);
      R.Chunked := Chunked;
      R.Expect_Continue := F.Expect_Continue and not P.HTTP_1_0 and R.Content_Length > 0;
      return (Kind => Complete, Head => R);
   end Finish;

   --  Rules 2-6 octet by octet from P.Pos, then rules 7-9 at the empty line; H starts
   --  with the request line.
   function Parse_Head (H : Octets; P : in out Progress) return Parse_Result is
      Len : constant Natural := H'Length;
      Pos : Natural := P.Pos;
      Line_End : Natural;  --  octets of the line end at Pos: 1 (LF) or 2 (CR LF)

      function At_Pos (I : Natural) return Octet is (H (H'First + I)) with Inline;

      function Refuse (Why : Reject) return Parse_Result is ((Kind => Error, Status => Why));

      --  The position of the first octet from From on that is not in Class, or Len. The
      --  loop runs on indices of H, so that its only check is the loop's own bound.
      function Scan (From : Natural; Class : Octet_Class) return Natural with Inline is
      begin
         for J in H'First + From .. H'Last loop
            if not Class (H (J)) then
               return J - H'First;
            end if;
         end loop;
         return Len;
      end Scan;

      function Partial return Parse_Result is
      begin
         P.Pos := Pos;
         return (Kind => Need_More, Empty_Lines => 0);
      end Partial;

      --  The request line's bound (rule 3) or the field section's (rule 6).
      type Bound is (Request_Line, Field_Section);

      function Over (B : Bound) return Boolean is
        (case B is
            when Request_Line  => Pos > Max_Request_Line,
            when Field_Section => Pos - P.Fields_Start > Max_Field_Section);

      --  A scan stopped at Pos ends the pass there: over B, or at the end of the input.
      function Stops (B : Bound) return Boolean is (Over (B) or Pos = Len);

      --  The answer when Stops (B): the bound first (414, 431), then wait for more.
      function Stop (B : Bound) return Parse_Result is
        (if not Over (B) then Partial
         elsif B = Request_Line then Refuse (URI_Too_Long)
         else Refuse (Fields_Too_Large));

      --  The line end at Pos (a CR or LF there) into Line_End; False when a CR ends the
      --  input or has no LF after it: then No_Line_End is the answer.
      function Line_End_Found return Boolean with Inline is
      begin
         if At_Pos (Pos) = LF then
            Line_End := 1;
         elsif Pos + 1 < Len and then At_Pos (Pos + 1) = LF then
            Line_End := 2;
         else
            return False;
         end if;
         return True;
      end Line_End_Found;

      --  A CR that ends the input waits for its LF; one without LF after it is a 400.
      function No_Line_End return Parse_Result is
        (if Pos + 1 = Len then Partial else Refuse (Bad_Request));

   begin
      loop
         case P.State is
            when Start | Method =>
               Pos := Scan (Pos, Is_TChar);
               if Stops (Request_Line) then
                  return Stop (Request_Line);
               elsif At_Pos (Pos) /= SP or Pos = 0 then
                  return Refuse (Bad_Request);
               end if;
               P.Method_End := Pos;
               Pos := Pos + 1;
               P.State := Target;

            when Target =>
               Pos := Scan (Pos, Is_VChar);
               if Stops (Request_Line) then
                  return Stop (Request_Line);
               elsif At_Pos (Pos) /= SP or Pos = P.Method_End + 1 then
                  return Refuse (Bad_Request);
               end if;
               P.Target_End := Pos;
               Pos := Pos + 1;
               P.State := Version;

            when Version =>
               --  Rule 4: HTTP/ DIGIT . DIGIT, checked octet by octet.
               declare
                  Start : constant Natural := P.Target_End + 1;
                  Form  : constant String := "HTTP/";
                  J     : constant Natural := H'First + Start;
               begin
                  --  The common case at once: the whole version is there.
                  if Pos = Start and then Len - Start >= 8
                    and then H (J .. J + 4) = HTTP_Slash and then Is_Digit (H (J + 5))
                    and then H (J + 6) = Ch ('.') and then Is_Digit (H (J + 7))
                  then
                     Pos := Start + 8;
                  end if;
                  while Pos < Len loop
                     declare
                        I : constant Natural := Pos - Start;
                        B : constant Octet := At_Pos (Pos);
                     begin
                        exit when not
                          (if I < 5 then B = Ch (Form (Form'First + I))
                           elsif I = 5 or I = 7 then Is_Digit (B)
                           elsif I = 6 then B = Ch ('.')
                           else False);
                     end;
                     Pos := Pos + 1;
                  end loop;
                  if Stops (Request_Line) then
                     return Stop (Request_Line);
                  elsif Pos - Start /= 8 or not (At_Pos (Pos) in CR | LF) then
                     return Refuse (Bad_Request);
                  elsif not Line_End_Found then
                     return No_Line_End;
                  elsif At_Pos (Start + 5) /= Ch ('1')
                    or not (At_Pos (Start + 7) in Ch ('0') | Ch ('1'))
                  then
                     return Refuse (Version_Not_Supported);
                  end if;
                  P.HTTP_1_0 := At_Pos (Start + 7) = Ch ('0');
                  Pos := Pos + Line_End;
                  P.Fields_Start := Pos;
                  P.State := Line_Start;
               end;

            when Line_Start =>
               if Pos = Len then
                  return Partial;
               end if;
               if At_Pos (Pos) in CR | LF then
                  if not Line_End_Found then
                     return No_Line_End;
                  end if;
                  Pos := Pos + Line_End;
                  if Over (Field_Section) then
                     return Refuse (Fields_Too_Large);
                  end if;
                  return Finish (H, P, Pos);
               end if;
               if not Is_TChar (At_Pos (Pos)) then
                  return Refuse (Bad_Request);  --  obs-fold, or not a name
               end if;
               P.Line_Start := Pos;
               P.State := Name;

            when Name =>
               Pos := Scan (Pos, Is_TChar);
               if Stops (Field_Section) then
                  return Stop (Field_Section);
               elsif At_Pos (Pos) /= Ch (':') then
                  return Refuse (Bad_Request);  --  whitespace before the colon too
               end if;
               P.Current := Field_Kind (H (H'First + P.Line_Start .. H'First + Pos - 1));
               Pos := Pos + 1;
               P.State := Value_Start;

            when Value_Start =>
               Pos := Scan (Pos, Is_OWS);
               if Stops (Field_Section) then
                  return Stop (Field_Section);
               end if;
               P.Value_Start := Pos;
               P.State := Value;

            when Value =>
               Pos := Scan (Pos, Is_Field_Value);
               if Stops (Field_Section) then
                  return Stop (Field_Section);
               elsif not (At_Pos (Pos) in CR | LF) then
                  return Refuse (Bad_Request);  --  a control octet, DEL
               elsif not Line_End_Found then
                  return No_Line_End;
               end if;
               P.Field_Lines := P.Field_Lines + 1;
               if P.Field_Lines > Max_Field_Lines then
                  return Refuse (Fields_Too_Large);
               end if;
               declare
                  First : Natural;
                  Last  : Integer;
               begin
                  Trim (H (H'First + P.Value_Start .. H'First + Pos - 1), First, Last);
                  Note_Field (P, H'First, H (First .. Last));
               end;
               Pos := Pos + Line_End;
               if Over (Field_Section) then
                  return Refuse (Fields_Too_Large);
               end if;
               P.State := Line_Start;
         end case;
      end loop;
   end Parse_Head;

   function Parse_More (Input : Octets; P : in out Progress) return Parse_Result is
      At_Octet : Natural := 0;
      Len      : constant Natural := Input'Length;
   begin
      if P.State /= Start then
         return Parse_Head (Input, P);
      end if;
      --  Rule 1: empty lines before the request line are dropped as they come.
      loop
         if At_Octet = Len then
            return (Kind => Need_More, Empty_Lines => At_Octet);
         end if;
         declare
            B : constant Octet := Input (Input'First + At_Octet);
         begin
            if B = LF then
               At_Octet := At_Octet + 1;
            elsif B = CR then
               if At_Octet + 1 = Len then
                  return (Kind => Need_More, Empty_Lines => At_Octet);
               elsif Input (Input'First + At_Octet + 1) /= LF then
                  return (Kind => Error, Status => Bad_Request);
               end if;
               At_Octet := At_Octet + 2;
            else
               exit;
            end if;
         end;
      end loop;
      P.State := Method;
      declare
         R : Parse_Result := Parse_Head (Input (Input'First + At_Octet .. Input'Last), P);
      begin
         case R.Kind is
            when Complete => R.Head.Head_Length := R.Head.Head_Length + At_Octet;
            when Need_More => R.Empty_Lines := At_Octet;
            when Error => null;
         end case;
         return R;
      end;
   end Parse_More;

   function Parse (Input : Octets) return Parse_Result is
      P : Progress := New_Head;
   begin
      return Parse_More (Input, P);
   end Parse;

end Renard.Requests;
