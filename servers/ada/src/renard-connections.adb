with Ada.Unchecked_Deallocation;
with Renard.Seeds;

package body Renard.Connections is

   use Interfaces;
   use type Requests.Body_Length;
   use type Requests.Outcome;

   Linger_Time  : constant Nanoseconds := 2 * Second;  --  SPEC §7.4
   Linger_Bytes : constant := 64 * 1024;
   Min_Read     : constant := 4096;  --  do not read into less room; answer what is held

   procedure Free is new Ada.Unchecked_Deallocation (Octets, Octets_Access);
   procedure Free is new Ada.Unchecked_Deallocation (String, String_Access);

   --  splitmix64: a 64-bit draw; k = draw mod N + 1 has a bias below 2^-44 (SPEC §3).
   function Draw (State : in out Unsigned_64) return Unsigned_64 is
      Z : Unsigned_64;
   begin
      State := State + 16#9E37_79B9_7F4A_7C15#;
      Z := State;
      Z := (Z xor Shift_Right (Z, 30)) * 16#BF58_476D_1CE4_E5B9#;
      Z := (Z xor Shift_Right (Z, 27)) * 16#94D0_49BB_1331_11EB#;
      return Z xor Shift_Right (Z, 31);
   end Draw;

   procedure Initialize (Env : in out Environment) is
   begin
      Env.Input := new Octets (0 .. Input_Size - 1);
      Env.Output := new String (1 .. Output_Bound + Responses.Max_Response);
      Env.Random := OS.Entropy;
   end Initialize;

   procedure Finalize (Env : in out Environment) is
   begin
      Free (Env.Input);
      Free (Env.Output);
   end Finalize;

   function Leftover_Length (C : Connection) return Natural is
     (if C.Leftover = null then 0 else C.Leftover'Length);
   function Unsent_Length (C : Connection) return Natural is
     (if C.Unsent = null then 0 else C.Unsent'Last - C.Unsent_First + 1);

   function Output_Full (C : Connection; Env : Environment) return Boolean is
     (Unsent_Length (C) + (Env.Output_Last) + Responses.Max_Response > Output_Bound);

   procedure Start (C : out Connection; Socket : OS.FD; Env : Environment) is
   begin
      C := (Socket => Socket, Head_Started => Env.Now, Last_Progress => Env.Now, others => <>);
   end Start;

   procedure Stop (C : in out Connection) is
   begin
      OS.Close (C.Socket);
      Free (C.Leftover);
      Free (C.Unsent);
      C.Socket := OS.No_FD;
   end Stop;

   function Deadline (C : Connection; Env : Environment) return Nanoseconds is
      Idle : constant Nanoseconds := C.Last_Progress + Env.Idle_Timeout;
   begin
      if C.State = Lingering then
         return C.Linger_Until;
      elsif Unsent_Length (C) > 0 or C.Head_Started = Never then
         return Idle;  --  the header deadline does not run on unread input
      elsif C.Leftover /= null then
         return C.Head_Started + Env.Header_Timeout;
      else
         return Nanoseconds'Min (C.Head_Started + Env.Header_Timeout, Idle);
      end if;
   end Deadline;

   --  Queue a refusal with Connection: close; the client may still be sending.
   procedure Refuse (C : in out Connection; Env : in out Environment; Status : Requests.Reject) is
   begin
      Responses.Write (Env.Output.all, Env.Output_Last, Responses.Refused, Status => Status,
                       Connection => Responses.Close, Date => Env.Date);
      C.State := Closing;
      C.Linger := True;
   end Refuse;

   --  Write as much of From (First .. Last) as the socket takes now: the octets taken,
   --  or -1 on error.
   function Write_Some (Socket : OS.FD; From : String) return Integer is
      Written : Natural := 0;
      N : Integer;
   begin
      while Written < From'Length loop
         N := OS.Send (Socket, From (From'First + Written)'Address, From'Length - Written);
         if N > 0 then
            Written := Written + N;
         elsif N = OS.Would_Block then
            exit;
         elsif N /= OS.Interrupted then
            return -1;
         end if;
      end loop;
      return Written;
   end Write_Some;

   --  Keep From after what is unsent.
   procedure Keep_Unsent (C : in out Connection; From : String) is
      Old : String_Access := C.Unsent;
   begin
      if From'Length = 0 then
         return;
      end if;
      if Old = null then
         C.Unsent := new String'(From);
      else
         C.Unsent := new String'(Old (C.Unsent_First .. Old'Last) & From);
         Free (Old);
      end if;
      C.Unsent_First := C.Unsent'First;
   end Keep_Unsent;

   function Discard_Input (C : in out Connection; Env : in out Environment) return Next is
      N : Integer;
   begin
      loop
         N := OS.Receive (C.Socket, Env.Input (0)'Address, Input_Size);
         if N = 0 then
            return Close;
         elsif N > 0 then
            C.Discarded := C.Discarded + N;
            if C.Discarded >= Linger_Bytes then
               return Close;
            end if;
         elsif N = OS.Would_Block then
            return Keep;
         elsif N /= OS.Interrupted then
            return Close;
         end if;
      end loop;
   end Discard_Input;

   --  Write Env.Output (then empty) after anything unsent; keep what the socket does not
   --  take. A closing connection whose output is all sent lingers, or closes at once.
   function Flush (C : in out Connection; Env : in out Environment) return Next is
      N : Integer;
   begin
      if Env.Output_Last > 0 then
         if C.Unsent = null then
            N := Write_Some (C.Socket, Env.Output (1 .. Env.Output_Last));
            if N < 0 then
               Env.Output_Last := 0;
               return Close;
            elsif N > 0 then
               C.Last_Progress := Env.Now;
            end if;
            Keep_Unsent (C, Env.Output (N + 1 .. Env.Output_Last));
         else
            Keep_Unsent (C, Env.Output (1 .. Env.Output_Last));
         end if;
         Env.Output_Last := 0;
      elsif C.Unsent /= null then
         N := Write_Some (C.Socket, C.Unsent (C.Unsent_First .. C.Unsent'Last));
         if N < 0 then
            return Close;
         elsif N > 0 then
            C.Last_Progress := Env.Now;
            C.Unsent_First := C.Unsent_First + N;
            if C.Unsent_First > C.Unsent'Last then
               Free (C.Unsent);
               C.Unsent_First := 1;
            end if;
         end if;
      end if;
      if C.State = Closing and C.Unsent = null then
         if not C.Linger or else not OS.Shut_Write (C.Socket) then
            return Close;
         end if;
         Free (C.Leftover);
         C.State := Lingering;
         C.Linger_Until := Env.Now + Linger_Time;
         C.Discarded := 0;
         return Discard_Input (C, Env);
      end if;
      return Keep;
   end Flush;

   --  Answer every complete request at the start of Input into Env.Output, discarding
   --  bodies. Consumed: octets used; Answered: any request was answered; Paused: stopped
   --  by the output bound (else at the end, a partial head or a closing response).
   procedure Serve
     (C : in out Connection; Env : in out Environment; Input : Octets;
      Consumed : out Natural; Answered, Paused : out Boolean)
   is
      At_Octet : Natural := 0;
      Len      : constant Natural := Input'Length;
   begin
      Answered := False;
      Paused := False;
      loop
         if C.Body_Left > 0 then
            declare
               Skip : constant Requests.Body_Length :=
                 Requests.Body_Length'Min (C.Body_Left, Requests.Body_Length (Len - At_Octet));
            begin
               C.Body_Left := C.Body_Left - Skip;
               At_Octet := At_Octet + Natural (Skip);
            end;
         end if;
         if At_Octet = Len or C.Body_Left > 0 then
            Consumed := At_Octet;
            return;
         end if;
         if Output_Full (C, Env) then
            Paused := True;
            Consumed := At_Octet;
            return;
         end if;
         declare
            R : constant Requests.Parse_Result :=
              Requests.Parse_More
                (Input (Input'First + At_Octet .. Input'Last), C.Progress);
         begin
            if R.Kind /= Requests.Need_More then
               C.Progress := Requests.New_Head;
            end if;
            case R.Kind is
               when Requests.Complete =>
                  declare
                     Req : Requests.Request renames R.Head;
                     Closes : constant Boolean :=
                       Env.Shutting_Down or not Req.Keep_Alive or Req.Chunked
                       or Req.Expect_Continue;
                     Connection : constant Responses.Persistence :=
                       (if Closes then Responses.Close
                        elsif Req.HTTP_1_0 then Responses.Keep_Alive
                        else Responses.Keep_Open);
                     K : Image_Number := 1;
                     Kind : Responses.Answer;
                  begin
                     Answered := True;
                     At_Octet := At_Octet + Req.Head_Length;
                     case Req.Target is
                        when Requests.Redirect =>
                           Kind := Responses.Redirect;
                           K := (if Req.Seeded then Seeds.K_For (Req.Seed_Hash, Env.Count)
                                 else Image_Number (Draw (Env.Random)
                                                    mod Unsigned_64 (Env.Count) + 1));
                        when Requests.Health => Kind := Responses.Health;
                        when Requests.Not_Found => Kind := Responses.Not_Found;
                        when Requests.Method_Not_Allowed =>
                           Kind := Responses.Method_Not_Allowed;
                     end case;
                     Responses.Write
                       (Env.Output.all, Env.Output_Last, Kind, K => K, Seeded => Req.Seeded,
                        Head_Method => Req.Head_Method, Connection => Connection,
                        Date => Env.Date);
                     if Closes then
                        --  A request that asked to close, with nothing after it and no
                        --  body to come, leaves the client nothing to send: no linger.
                        C.State := Closing;
                        C.Linger := not (not Req.Keep_Alive and not Req.Chunked
                                         and Req.Content_Length = 0
                                         and not Env.Shutting_Down and At_Octet = Len);
                        Consumed := Len;
                        return;
                     end if;
                     C.Body_Left := Req.Content_Length;
                  end;
               when Requests.Need_More =>
                  Consumed := At_Octet + R.Empty_Lines;
                  return;
               when Requests.Error =>
                  Refuse (C, Env, R.Status);
                  Answered := True;
                  Consumed := Len;
                  return;
            end case;
         end;
      end loop;
   end Serve;

   --  Answer the requests in Env.Input (0 .. Len - 1), keep what is left as Leftover, and
   --  move the header deadline's start. Paused: stopped by the output bound.
   procedure Serve_Held
     (C : in out Connection; Env : in out Environment; Len : Natural; Paused : out Boolean)
   is
      Consumed : Natural;
      Answered : Boolean;
   begin
      Paused := False;
      if Len = 0 then
         return;
      end if;
      Serve (C, Env, Env.Input (0 .. Len - 1), Consumed, Answered, Paused);
      if Consumed < Len and C.State = Open then
         C.Leftover := new Octets'(Env.Input (Consumed .. Len - 1));
      end if;
      if Answered or C.Head_Started = Never then
         C.Head_Started := (if C.Leftover /= null then Env.Now else Never);
      end if;
   end Serve_Held;

   --  Read and answer until the socket is drained, the output bound is reached, or the
   --  connection is closing. Edge-triggered: a read shorter than the room means drained,
   --  unless Peer_Closed says that the end of input waits behind the data.
   function Read_Requests
     (C : in out Connection; Env : in out Environment; Peer_Closed : Boolean) return Next
   is
      Held, Room, Received : Natural;
      Drained, Paused : Boolean;
      N : Integer;
   begin
      while C.State = Open and Unsent_Length (C) + Responses.Max_Response <= Output_Bound loop
         Held := Leftover_Length (C);
         if Held > 0 then
            Env.Input (0 .. Held - 1) := C.Leftover.all;
            Free (C.Leftover);
         end if;
         Room := Input_Size - Held;
         Received := 0;
         Drained := False;
         if Room >= Min_Read and not C.Peer_Done then
            N := OS.Receive (C.Socket, Env.Input (Held)'Address, Room);
            if N = 0 then
               C.Peer_Done := True;
            elsif N > 0 then
               Received := N;
               Drained := Received < Room and not Peer_Closed;
            elsif N = OS.Would_Block then
               Drained := True;
            elsif N /= OS.Interrupted then
               return Close;
            end if;
         end if;
         if Received > 0 then
            C.Last_Progress := Env.Now;
         end if;
         Serve_Held (C, Env, Held + Received, Paused);
         if C.Peer_Done and not Paused and C.State = Open then
            --  Every whole request the peer sent is answered; a partial one never ends.
            --  The peer has shut its side: nothing more can come, no need to linger.
            C.State := Closing;
            C.Linger := False;
            Free (C.Leftover);
         end if;
         if Flush (C, Env) = Close then
            return Close;
         end if;
         --  Paused: Leftover holds whole requests; go on once the output has room.
         exit when Drained and not Paused;
      end loop;
      return Keep;
   end Read_Requests;

   function On_Readable
     (C : in out Connection; Env : in out Environment; Peer_Closed : Boolean) return Next is
   begin
      case C.State is
         when Open => return Read_Requests (C, Env, Peer_Closed);
         when Lingering => return Discard_Input (C, Env);
         when Closing => return Keep;
      end case;
   end On_Readable;

   function On_Writable (C : in out Connection; Env : in out Environment) return Next is
   begin
      if C.Unsent = null then
         return Keep;
      end if;
      if Flush (C, Env) = Close then
         return Close;
      end if;
      --  Reading was paused while the output bound was reached: resume.
      if C.State = Open and Unsent_Length (C) + Responses.Max_Response <= Output_Bound then
         return Read_Requests (C, Env, False);
      end if;
      return Keep;
   end On_Writable;

   function Expire (C : in out Connection; Env : in out Environment) return Next is
   begin
      if C.State /= Lingering and Unsent_Length (C) = 0 and C.Head_Started /= Never
        and C.Leftover /= null
      then
         Free (C.Leftover);
         C.Progress := Requests.New_Head;
         Refuse (C, Env, Requests.Request_Timeout);
         return Flush (C, Env);
      end if;
      return Close;
   end Expire;

   procedure Rank (C : Connection; Class : out Eviction_Rank; Since : out Nanoseconds) is
   begin
      Class := 3;
      Since := Never;
      case C.State is
         when Lingering =>
            Class := 0;
            Since := C.Linger_Until;
         when Closing =>
            null;
         when Open =>
            if Unsent_Length (C) > 0 or C.Body_Left > 0 or C.Peer_Done then
               null;
            elsif C.Leftover /= null then
               Class := 1;
               Since := (if C.Head_Started /= Never then C.Head_Started else C.Last_Progress);
            else
               Class := 2;
               Since := C.Last_Progress;
            end if;
      end case;
   end Rank;

   function End_Drain (C : in out Connection; Env : in out Environment) return Next is
   begin
      if (C.State = Open and C.Unsent = null) and then Read_Requests (C, Env, False) = Close then
         return Close;
      end if;
      return (if C.State = Open and C.Unsent = null then Close else Keep);
   end End_Drain;

end Renard.Connections;
