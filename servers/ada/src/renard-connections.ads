--  One connection (SPEC §6, §7): reading, answering every complete request of a read with
--  one write, body discard, persistence, lingering close, deadlines.
--
--  Memory contract: an idle connection holds no buffer. Leftover holds only a partial head
--  (or input set aside while the output bound is reached); Unsent only what the socket did
--  not take. Both are freed as soon as they empty.
with Interfaces;
with Renard.OS;
with Renard.Requests;
with Renard.Responses;

package Renard.Connections is

   Output_Bound : constant := 64 * 1024;   --  most unsent octets per connection (SPEC §7.5)
   Input_Size   : constant := 128 * 1024;  --  the thread's read buffer, > the largest head

   type Octets_Access is access Octets;
   type String_Access is access String;

   --  What every connection of one thread uses, one at a time.
   type Environment is record
      Input          : Octets_Access;  --  Input_Size octets; contents live for one call
      Output         : String_Access;  --  the responses of one read batch
      Output_Last    : Natural := 0;
      Date           : Responses.Date_Line;
      Random         : Interfaces.Unsigned_64 := 0;  --  splitmix64 state, from the OS
      Now            : Nanoseconds := 0;             --  monotonic, of this event batch
      Count          : Image_Count := 1;
      Header_Timeout : Nanoseconds := 10 * Second;
      Idle_Timeout   : Nanoseconds := 60 * Second;
      Shutting_Down  : Boolean := False;  --  every response closes (SPEC §7.6)
   end record;

   procedure Initialize (Env : in out Environment);
   procedure Finalize (Env : in out Environment);

   type Phase is
     (Open,        --  reading requests
      Closing,     --  a closing response is queued; nothing more is read as requests
      Lingering);  --  write side shut; input discarded for 2 s or 64 KiB (SPEC §7.4)

   type Connection is record
      Socket        : OS.FD := OS.No_FD;
      State         : Phase := Open;
      Linger        : Boolean := False;  --  Closing: the client may still send (§7.4)
      Peer_Done     : Boolean := False;  --  the peer shut its write side
      Leftover      : Octets_Access;
      Unsent        : String_Access;
      Unsent_First  : Positive := 1;     --  the next octet of Unsent to write
      Discarded     : Natural := 0;
      Body_Left     : Requests.Body_Length := 0;
      Progress      : Requests.Progress := Requests.New_Head;
      Head_Started  : Nanoseconds := 0;  --  start of the header deadline; Never: none due
      Last_Progress : Nanoseconds := 0;  --  octets received or taken by the socket
      Linger_Until  : Nanoseconds := 0;
   end record;

   function Is_Free (C : Connection) return Boolean is (OS."=" (C.Socket, OS.No_FD));

   type Next is (Keep, Close);

   --  A connection on Socket, accepted at Env.Now.
   procedure Start (C : out Connection; Socket : OS.FD; Env : Environment)
     with Post => not Is_Free (C);
   --  Close the socket, free the buffers.
   procedure Stop (C : in out Connection) with Post => Is_Free (C);

   --  When the connection expires, and whether it then gets a 408 first.
   function Deadline (C : Connection; Env : Environment) return Nanoseconds;
   function Expire (C : in out Connection; Env : in out Environment) return Next;

   function On_Readable
     (C : in out Connection; Env : in out Environment; Peer_Closed : Boolean) return Next;
   function On_Writable (C : in out Connection; Env : in out Environment) return Next;

   --  How readily the connection may be evicted at the cap (SPEC §7.5, §7.5.1): Rank 0
   --  lingering, 1 a partial head, 2 nothing received, 3 never (a request not answered,
   --  output not written, a body being discarded); Since: older first.
   subtype Eviction_Rank is Natural range 0 .. 3;
   procedure Rank (C : Connection; Class : out Eviction_Rank; Since : out Nanoseconds);

   --  The drain window ended (SPEC §7.6): answer what the socket already holds, then
   --  close unless a response is under way.
   function End_Drain (C : in out Connection; Env : in out Environment) return Next;

end Renard.Connections;
