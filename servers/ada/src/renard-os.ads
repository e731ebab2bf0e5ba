--  The operating system through Interfaces.C: the only package that speaks C.
--  Sockets, epoll, clocks, entropy, the shutdown signal. Linux, x86-64 layouts.
with Interfaces;
with System;

package Renard.OS is

   type FD is new Integer;
   No_FD : constant FD := -1;

   --  A sockaddr_in or sockaddr_in6, as bytes.
   type Socket_Address is record
      Bytes  : Octets (0 .. 27) := (others => 0);
      Length : Natural := 0;
   end record;

   --  Numeric A.B.C.D (IPv6: the text inside the brackets) and a port.
   function To_Address
     (Host : String; IPv6 : Boolean; Port : Natural; Address : out Socket_Address) return Boolean
     with Pre => Port <= 65_535;

   --  "A.B.C.D:PORT" or "[ADDR]:PORT".
   function Image (Address : Socket_Address) return String;

   --  A non-blocking listening socket (SO_REUSEADDR, SO_REUSEPORT, backlog 4096) bound to
   --  Address; No_FD on failure, with Last_Error set.
   function Listen_On (Address : Socket_Address) return FD;
   function Local_Address (Socket : FD; Address : out Socket_Address) return Boolean;

   function Last_Error return Integer;
   function Error_Message (Code : Integer) return String;

   type Accept_Result is (Accepted, Retry, Stop);
   --  accept4 (non-blocking, close-on-exec) with TCP_NODELAY set.
   procedure Accept_Connection (Listener : FD; Socket : out FD; Result : out Accept_Result);

   --  Counts of octets, or one of these.
   Would_Block : constant := -1;
   Interrupted : constant := -2;
   Failed      : constant := -3;

   function Receive (Socket : FD; Into : System.Address; Length : Natural) return Integer;
   --  send(2) with MSG_NOSIGNAL.
   function Send (Socket : FD; From : System.Address; Length : Natural) return Integer;
   function Shut_Write (Socket : FD) return Boolean;
   procedure Close (Socket : FD);

   --  epoll.
   subtype Event_Mask is Interfaces.Unsigned_32;
   Readable     : constant Event_Mask := 16#001#;
   Writable     : constant Event_Mask := 16#004#;
   Error_Event  : constant Event_Mask := 16#008#;
   Hang_Up      : constant Event_Mask := 16#010#;
   Peer_Hang_Up : constant Event_Mask := 16#2000#;
   Edge         : constant Event_Mask := 16#8000_0000#;

   type Event is record
      Events : Event_Mask;
      Token  : Interfaces.Unsigned_64;
   end record;
   for Event use record
      Events at 0 range 0 .. 31;
      Token  at 4 range 0 .. 63;
   end record;
   for Event'Size use 96;
   for Event'Alignment use 4;
   type Event_Array is array (Positive range <>) of Event
     with Component_Size => 96, Convention => C;

   function Epoll_Create return FD;
   function Epoll_Add
     (Poll : FD; Socket : FD; Events : Event_Mask; Token : Interfaces.Unsigned_64) return Boolean;
   procedure Epoll_Delete (Poll : FD; Socket : FD);
   --  Events received (0 on timeout or EINTR), or -1 on failure. Timeout_MS < 0: no timeout.
   function Epoll_Wait
     (Poll : FD; Events : in out Event_Array; Timeout_MS : Integer) return Integer;

   function Monotonic return Nanoseconds;
   function Unix_Seconds return Interfaces.Integer_64;
   --  64 bits from getrandom(2).
   function Entropy return Interfaces.Unsigned_64;

   --  An eventfd that SIGTERM and SIGINT make readable (SPEC §7.6); SIGPIPE ignored.
   function Shutdown_Signal return FD;

   --  The soft descriptor limit raised to the hard one.
   procedure Raise_Descriptor_Limit;
   --  CPUs in the process's affinity mask.
   function CPUs_Available return Positive;

end Renard.OS;
