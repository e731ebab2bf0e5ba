with Ada.Unchecked_Deallocation;
with Interfaces;
with Renard.Connections; use Renard.Connections;
with Renard.Responses;

package body Renard.Servers is

   use Interfaces;
   use type OS.FD;
   use type OS.Accept_Result;

   Listener_Token : constant Unsigned_64 := Unsigned_64'Last;
   Shutdown_Token : constant Unsigned_64 := Unsigned_64'Last - 1;
   Max_Events     : constant := 256;
   --  After the drain window, responses under way get this long (SPEC §7.6: exit within
   --  the window plus 1 s).
   Drain_Finish   : constant Nanoseconds := Second / 2;

   --  Connections open in the whole process (SPEC §7.5: the cap is global).
   protected Open_Count is
      --  One more; Admitted is False (and nothing counted) when Cap are already open.
      procedure Add (Cap : Positive; Admitted : out Boolean);
      procedure Remove;
   private
      Open : Natural := 0;
   end Open_Count;

   protected body Open_Count is
      procedure Add (Cap : Positive; Admitted : out Boolean) is
      begin
         Admitted := Open < Cap;
         if Admitted then
            Open := Open + 1;
         end if;
      end Add;
      procedure Remove is
      begin
         Open := Open - 1;
      end Remove;
   end Open_Count;

   --  The loops' listeners closed since the signal. SPEC §7.6: every listener is closed
   --  before any answer tells a client to close, or a client told to reconnect could be
   --  served by a loop that has not seen the signal yet.
   protected Closed_Listeners is
      --  One more closed, out of Total.
      procedure Add (Total : Positive);
      --  Open while every listener is closed.
      entry Wait_For_All;
   private
      Closed   : Natural := 0;
      Expected : Positive := Positive'Last;
   end Closed_Listeners;

   protected body Closed_Listeners is
      procedure Add (Total : Positive) is
      begin
         Expected := Total;
         Closed := Closed + 1;
      end Add;
      entry Wait_For_All when Closed >= Expected is
      begin
         null;
      end Wait_For_All;
   end Closed_Listeners;

   --  The longest wait for the other loops' listeners (seconds): a loop that could not be set
   --  up never closes one. Measured beside the flake campaign's busy loops and tests (20
   --  drains, --threads 2, 8 keep-alive clients): every listener closed within 13.2 ms
   --  of the signal, a margin of 17 times that.
   Listeners_Wait : constant Duration := 0.25;

   type Slot_Array is array (Natural range <>) of Connection;
   type Slot_Access is access Slot_Array;
   type Index_Array is array (Natural range <>) of Natural;
   type Index_Access is access Index_Array;
   procedure Free is new Ada.Unchecked_Deallocation (Slot_Array, Slot_Access);
   procedure Free is new Ada.Unchecked_Deallocation (Index_Array, Index_Access);

   No_Slot : constant Natural := Natural'Last;

   --  The connections of one thread, indexed by slot (the epoll token); freed when the
   --  last one closes, so memory returns to its baseline.
   type Slots is record
      Conns     : Slot_Access;
      Free_List : Index_Access;  --  free slot indexes, a stack
      Free_Len  : Natural := 0;
      Live      : Natural := 0;
   end record;

   function Size (S : Slots) return Natural is (if S.Conns = null then 0 else S.Conns'Length);

   type Worker is record
      Poll       : OS.FD := OS.No_FD;
      Listener   : OS.FD := OS.No_FD;
      Env        : Environment;
      Table      : Slots;
      Next_Scan  : Nanoseconds := Never;  --  no deadline is before it
      Drain_End  : Nanoseconds := Never;  --  end of the drain window; Never: serving
      Drain_Ended : Boolean := False;
   end record;

   procedure Note_Deadline (W : in out Worker; At_Time : Nanoseconds) is
   begin
      W.Next_Scan := Nanoseconds'Min (W.Next_Scan, At_Time);
   end Note_Deadline;

   --  Slot I is free again: the next Take_Slot returns it.
   procedure Give_Back (S : in out Slots; I : Natural) is
   begin
      S.Free_List (S.Free_Len) := I;
      S.Free_Len := S.Free_Len + 1;
   end Give_Back;

   procedure Remove (W : in out Worker; I : Natural) is
      S : Slots renames W.Table;
   begin
      Stop (S.Conns (I));
      Open_Count.Remove;
      Give_Back (S, I);
      S.Live := S.Live - 1;
      if S.Live = 0 then
         Free (S.Conns);
         Free (S.Free_List);
         S.Free_Len := 0;
      end if;
   end Remove;

   --  After connection I was served: close it, or note its next deadline.
   procedure Settle (W : in out Worker; I : Natural; Outcome : Next) is
   begin
      if Outcome = Close then
         Remove (W, I);
      else
         Note_Deadline (W, Deadline (W.Table.Conns (I), W.Env));
      end if;
   end Settle;

   --  A free slot index, growing the arrays by doubling when needed.
   function Take_Slot (S : in out Slots) return Natural is
   begin
      if S.Free_Len = 0 then
         declare
            Old_Size : constant Natural := Size (S);
            New_Size : constant Positive := (if Old_Size = 0 then 16 else 2 * Old_Size);
            Conns    : constant Slot_Access := new Slot_Array (0 .. New_Size - 1);
            List     : constant Index_Access := new Index_Array (0 .. New_Size - 1);
         begin
            if S.Conns /= null then
               Conns (0 .. Old_Size - 1) := S.Conns.all;
               Free (S.Conns);
               Free (S.Free_List);
            end if;
            S.Conns := Conns;
            S.Free_List := List;
            for I in reverse Old_Size .. New_Size - 1 loop
               Give_Back (S, I);
            end loop;
         end;
      end if;
      S.Free_Len := S.Free_Len - 1;
      return S.Free_List (S.Free_Len);
   end Take_Slot;

   --  The connection least likely to be a client (SPEC §7.5): lingering, then the oldest
   --  partial head, then the longest silent; No_Slot when none may be chosen.
   function Choose_Victim (W : Worker) return Natural is
      Best       : Natural := No_Slot;
      Best_Class : Eviction_Rank := 3;
      Best_Since : Nanoseconds := Never;
      Class      : Eviction_Rank;
      Since      : Nanoseconds;
   begin
      for I in 0 .. Size (W.Table) - 1 loop
         if not Is_Free (W.Table.Conns (I)) then
            Rank (W.Table.Conns (I), Class, Since);
            if Class < Best_Class or (Class = Best_Class and Class < 3 and Since < Best_Since)
            then
               Best := I;
               Best_Class := Class;
               Best_Since := Since;
            end if;
         end if;
      end loop;
      return Best;
   end Choose_Victim;

   --  Accept every pending connection and read it (Read_At_Once false: its first read is
   --  left to the next epoll_wait, which reports what arrived before the registration); at
   --  the cap, make room by eviction or close the new one at once, without reading (SPEC §7.5).
   procedure Accept_All (W : in out Worker; Cap : Positive; Read_At_Once : Boolean := True) is
      Socket   : OS.FD;
      Result   : OS.Accept_Result;
      Admitted : Boolean;
      I        : Natural;
   begin
      loop
         OS.Accept_Connection (W.Listener, Socket, Result);
         exit when Result = OS.Stop;
         if Result = OS.Accepted then
            Open_Count.Add (Cap, Admitted);
            if not Admitted then
               declare
                  Victim : constant Natural := Choose_Victim (W);
               begin
                  if Victim /= No_Slot then
                     Remove (W, Victim);
                     Open_Count.Add (Cap, Admitted);
                  end if;
               end;
            end if;
            if not Admitted then
               OS.Close (Socket);
            else
               I := Take_Slot (W.Table);
               if not OS.Epoll_Add
                 (W.Poll, Socket,
                  OS.Readable or OS.Writable or OS.Peer_Hang_Up or OS.Edge, Unsigned_64 (I))
               then
                  Give_Back (W.Table, I);
                  Open_Count.Remove;
                  OS.Close (Socket);
               else
                  Start (W.Table.Conns (I), Socket, W.Env);
                  W.Table.Live := W.Table.Live + 1;
                  --  Read it at once: a client's request is usually there already, and a
                  --  connection whose request is answered is not the one the next
                  --  arrival at the cap evicts.
                  Settle (W, I, (if Read_At_Once
                                 then On_Readable (W.Table.Conns (I), W.Env, False)
                                 else Keep));
               end if;
            end if;
         end if;
      end loop;
   end Accept_All;

   --  Apply every passed deadline; the earliest one left becomes Next_Scan.
   procedure Expire_All (W : in out Worker) is
      I : Natural := 0;
      Outcome : Next;
   begin
      W.Next_Scan := Never;
      while I < Size (W.Table) loop
         if not Is_Free (W.Table.Conns (I)) then
            Outcome := Keep;
            if Deadline (W.Table.Conns (I), W.Env) <= W.Env.Now then
               Outcome := Expire (W.Table.Conns (I), W.Env);
            end if;
            Settle (W, I, Outcome);
         end if;
         I := I + 1;
      end loop;
   end Expire_All;

   --  SIGTERM/SIGINT: stop listening at once and wait (at most Listeners_Wait) until every
   --  loop has; then serve the open connections for the drain window, every answer with
   --  Connection: close (SPEC §7.6).
   procedure Begin_Shutdown (W : in out Worker; S : Shared) is
   begin
      W.Env.Shutting_Down := True;
      OS.Epoll_Delete (W.Poll, S.Shutdown);
      W.Drain_End := W.Env.Now
        + Nanoseconds'Min (S.Settings.Drain_Timeout, S.Settings.Header_Timeout);
      --  What the kernel queued on the listener is open already, and closing the listener
      --  would reset it: accepted now, read by the drain's epoll_wait (answers wait for
      --  every loop's listener to close).
      Accept_All (W, S.Settings.Max_Connections, Read_At_Once => False);
      OS.Close (W.Listener);
      W.Listener := OS.No_FD;
      Closed_Listeners.Add (S.Settings.Threads);
      select
         Closed_Listeners.Wait_For_All;
      or
         delay Listeners_Wait;
      end select;
      W.Env.Now := OS.Monotonic;
   end Begin_Shutdown;

   --  The window ended: what has nothing received or an incomplete head is closed
   --  unanswered; what the sockets already hold is answered; responses under way finish.
   procedure End_Drain_All (W : in out Worker) is
   begin
      W.Drain_Ended := True;
      for I in 0 .. Size (W.Table) - 1 loop
         exit when W.Table.Conns = null;
         if not Is_Free (W.Table.Conns (I)) and then End_Drain (W.Table.Conns (I), W.Env) = Close
         then
            Remove (W, I);
         end if;
      end loop;
   end End_Drain_All;

   procedure On_Event (W : in out Worker; I : Natural; Events : OS.Event_Mask) is
      Peer_Closed : constant Boolean :=
        (Events and (OS.Hang_Up or OS.Error_Event)) /= 0
        or else ((Events and OS.Readable) /= 0 and (Events and OS.Peer_Hang_Up) /= 0);
      Outcome : Next := Keep;
   begin
      if I >= Size (W.Table) or else Is_Free (W.Table.Conns (I)) then
         return;
      end if;
      if (Events and OS.Writable) /= 0 then
         Outcome := On_Writable (W.Table.Conns (I), W.Env);
      end if;
      if Outcome = Keep and ((Events and OS.Readable) /= 0 or Peer_Closed) then
         Outcome := On_Readable (W.Table.Conns (I), W.Env, Peer_Closed);
      end if;
      Settle (W, I, Outcome);
   end On_Event;

   procedure Shut_Down (W : in out Worker) is
   begin
      for I in 0 .. Size (W.Table) - 1 loop
         exit when W.Table.Conns = null;
         if not Is_Free (W.Table.Conns (I)) then
            Remove (W, I);
         end if;
      end loop;
      if W.Listener /= OS.No_FD then
         OS.Close (W.Listener);
      end if;
      if W.Poll /= OS.No_FD then
         OS.Close (W.Poll);
      end if;
      Finalize (W.Env);
   end Shut_Down;

   function Run (S : Shared; Listener : OS.FD) return Boolean is
      W      : Worker;
      Events : OS.Event_Array (1 .. Max_Events);
      Wake   : Nanoseconds;
      Timeout_MS : Integer;
      N      : Integer;
   begin
      W.Listener := Listener;
      Initialize (W.Env);
      W.Env.Now := OS.Monotonic;
      W.Env.Count := S.Settings.Count;
      W.Env.Header_Timeout := S.Settings.Header_Timeout;
      W.Env.Idle_Timeout := S.Settings.Idle_Timeout;
      Responses.Update (W.Env.Date, OS.Unix_Seconds);
      W.Poll := OS.Epoll_Create;
      if W.Poll = OS.No_FD
        or else not OS.Epoll_Add (W.Poll, Listener, OS.Readable or OS.Edge, Listener_Token)
        or else not OS.Epoll_Add (W.Poll, S.Shutdown, OS.Readable, Shutdown_Token)
      then
         Shut_Down (W);
         return False;
      end if;
      loop
         Wake := W.Next_Scan;
         if W.Env.Shutting_Down then
            Wake := Nanoseconds'Min
              (Wake, (if W.Drain_Ended then W.Drain_End + Drain_Finish else W.Drain_End));
         end if;
         Timeout_MS := -1;
         if Wake /= Never then
            declare
               Left : constant Nanoseconds := Wake - OS.Monotonic;
            begin
               --  Rounded up, plus 1 ms: a timeout never fires early (SPEC §7.5).
               Timeout_MS := (if Left <= 0 then 0
                              else Integer (Nanoseconds'Min (Left / 1_000_000 + 1, 86_400_000)));
            end;
         end if;
         N := OS.Epoll_Wait (W.Poll, Events, Timeout_MS);
         exit when N < 0;
         W.Env.Now := OS.Monotonic;
         Responses.Update (W.Env.Date, OS.Unix_Seconds);
         for E in 1 .. N loop
            if Events (E).Token = Listener_Token then
               if W.Listener /= OS.No_FD then
                  Accept_All (W, S.Settings.Max_Connections);
               end if;
            elsif Events (E).Token = Shutdown_Token then
               if not W.Env.Shutting_Down then
                  Begin_Shutdown (W, S);
               end if;
            else
               On_Event (W, Natural (Events (E).Token), Events (E).Events);
            end if;
         end loop;
         if W.Next_Scan <= W.Env.Now then
            Expire_All (W);
         end if;
         if W.Env.Shutting_Down then
            if not W.Drain_Ended and W.Env.Now >= W.Drain_End then
               End_Drain_All (W);
            end if;
            exit when W.Table.Live = 0
              or (W.Drain_Ended and W.Env.Now >= W.Drain_End + Drain_Finish);
         end if;
      end loop;
      Shut_Down (W);
      return True;
   end Run;

end Renard.Servers;
