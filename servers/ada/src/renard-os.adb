with GNAT.OS_Lib;
with Interfaces.C;         use Interfaces.C;
with Interfaces.C.Strings;

package body Renard.OS is

   AF_INET      : constant := 2;
   AF_INET6     : constant := 10;
   SOCK_STREAM  : constant := 1;
   SOCK_NONBLOCK : constant := 8#4000#;
   SOCK_CLOEXEC : constant := 8#2000000#;
   SOL_SOCKET   : constant := 1;
   SO_REUSEADDR : constant := 2;
   SO_REUSEPORT : constant := 15;
   IPPROTO_TCP  : constant := 6;
   TCP_NODELAY  : constant := 1;
   MSG_NOSIGNAL : constant := 16#4000#;
   SHUT_WR      : constant := 1;
   EPOLL_CTL_ADD : constant := 1;
   EPOLL_CTL_DEL : constant := 2;
   EAGAIN       : constant := 11;
   EINTR        : constant := 4;
   ECONNABORTED : constant := 103;
   SIGINT       : constant := 2;
   SIGPIPE      : constant := 13;
   SIGTERM      : constant := 15;
   RLIMIT_NOFILE : constant := 7;
   CLOCK_MONOTONIC : constant := 1;

   type Long_Array is array (1 .. 2) of long with Convention => C;

   function c_socket (Domain, Kind, Protocol : int) return int
     with Import, Convention => C, External_Name => "socket";
   function c_setsockopt
     (S, Level, Name : int; Value : access int; Length : unsigned) return int
     with Import, Convention => C, External_Name => "setsockopt";
   function c_bind (S : int; Addr : System.Address; Length : unsigned) return int
     with Import, Convention => C, External_Name => "bind";
   function c_listen (S, Backlog : int) return int
     with Import, Convention => C, External_Name => "listen";
   function c_getsockname (S : int; Addr : System.Address; Length : access unsigned) return int
     with Import, Convention => C, External_Name => "getsockname";
   function c_accept4
     (S : int; Addr : System.Address; Length : System.Address; Flags : int) return int
     with Import, Convention => C, External_Name => "accept4";
   function c_recv (S : int; Buffer : System.Address; Length : size_t; Flags : int) return long
     with Import, Convention => C, External_Name => "recv";
   function c_send (S : int; Buffer : System.Address; Length : size_t; Flags : int) return long
     with Import, Convention => C, External_Name => "send";
   function c_write (S : int; Buffer : System.Address; Length : size_t) return long
     with Import, Convention => C, External_Name => "write";
   function c_shutdown (S, How : int) return int
     with Import, Convention => C, External_Name => "shutdown";
   function c_close (S : int) return int
     with Import, Convention => C, External_Name => "close";
   function c_inet_pton (Family : int; Text : char_array; Into : System.Address) return int
     with Import, Convention => C, External_Name => "inet_pton";
   function c_inet_ntop
     (Family : int; From : System.Address; Into : out char_array; Size : unsigned)
      return Interfaces.C.Strings.chars_ptr
     with Import, Convention => C, External_Name => "inet_ntop";
   function c_epoll_create1 (Flags : int) return int
     with Import, Convention => C, External_Name => "epoll_create1";
   function c_epoll_ctl (Poll, Op, S : int; Ev : System.Address) return int
     with Import, Convention => C, External_Name => "epoll_ctl";
   function c_epoll_wait (Poll : int; Events : System.Address; Max, Timeout : int) return int
     with Import, Convention => C, External_Name => "epoll_wait";
   function c_clock_gettime (Clock : int; Time : out Long_Array) return int
     with Import, Convention => C, External_Name => "clock_gettime";
   function c_time (Null_Pointer : System.Address) return long
     with Import, Convention => C, External_Name => "time";
   function c_getrandom (Buffer : System.Address; Length : size_t; Flags : unsigned) return long
     with Import, Convention => C, External_Name => "getrandom";
   function c_eventfd (Initial : unsigned; Flags : int) return int
     with Import, Convention => C, External_Name => "eventfd";
   function c_signal (Signum : int; Handler : System.Address) return System.Address
     with Import, Convention => C, External_Name => "signal";
   function c_getrlimit (Resource : int; Limit : out Long_Array) return int
     with Import, Convention => C, External_Name => "getrlimit";
   function c_setrlimit (Resource : int; Limit : Long_Array) return int
     with Import, Convention => C, External_Name => "setrlimit";
   function c_sched_getaffinity (Pid : int; Size : size_t; Mask : System.Address) return int
     with Import, Convention => C, External_Name => "sched_getaffinity";

   function Last_Error return Integer is (GNAT.OS_Lib.Errno);

   function Error_Message (Code : Integer) return String is
     (GNAT.OS_Lib.Errno_Message (Code, "error") & " (os error" & Code'Image & ")");

   function Family (Address : Socket_Address) return Natural is
     (Natural (Address.Bytes (0)) + 256 * Natural (Address.Bytes (1)));

   function To_Address
     (Host : String; IPv6 : Boolean; Port : Natural; Address : out Socket_Address) return Boolean
   is
      Kind : constant Natural := (if IPv6 then AF_INET6 else AF_INET);
      Raw  : Octets (0 .. 15) := (others => 0);
   begin
      Address := (others => <>);
      if Host'Length = 0 or else Host'Length > 63
        or else c_inet_pton (int (Kind), To_C (Host), Raw'Address) /= 1
      then
         return False;
      end if;
      Address.Bytes (0) := Octet (Kind mod 256);
      Address.Bytes (2) := Octet (Port / 256);
      Address.Bytes (3) := Octet (Port mod 256);
      if IPv6 then
         Address.Bytes (8 .. 23) := Raw;
         Address.Length := 28;
      else
         Address.Bytes (4 .. 7) := Raw (0 .. 3);
         Address.Length := 16;
      end if;
      return True;
   end To_Address;

   function Image (Address : Socket_Address) return String is
      IPv6 : constant Boolean := Family (Address) = AF_INET6;
      Text : char_array (0 .. 63) := (others => nul);
      Port : constant Natural :=
        256 * Natural (Address.Bytes (2)) + Natural (Address.Bytes (3));
      Port_Image : constant String := Port'Image;
      Ignored : Interfaces.C.Strings.chars_ptr;
   begin
      if IPv6 then
         Ignored := c_inet_ntop (AF_INET6, Address.Bytes (8)'Address, Text, 64);
         return "[" & To_Ada (Text) & "]:" & Port_Image (2 .. Port_Image'Last);
      else
         Ignored := c_inet_ntop (AF_INET, Address.Bytes (4)'Address, Text, 64);
         return To_Ada (Text) & ":" & Port_Image (2 .. Port_Image'Last);
      end if;
   end Image;

   function Set_Option (S : int; Level, Name : int) return Boolean is
      One : aliased int := 1;
   begin
      return c_setsockopt (S, Level, Name, One'Access, 4) = 0;
   end Set_Option;

   function Listen_On (Address : Socket_Address) return FD is
      S : constant int :=
        c_socket (int (Family (Address)), SOCK_STREAM + SOCK_NONBLOCK + SOCK_CLOEXEC, 0);
   begin
      if S < 0 then
         return No_FD;
      end if;
      if Set_Option (S, SOL_SOCKET, SO_REUSEADDR)
        and then Set_Option (S, SOL_SOCKET, SO_REUSEPORT)
        and then c_bind (S, Address.Bytes'Address, unsigned (Address.Length)) = 0
        and then c_listen (S, 4096) = 0
      then
         return FD (S);
      end if;
      declare
         Saved : constant Integer := Last_Error;
      begin
         Close (FD (S));
         GNAT.OS_Lib.Set_Errno (Saved);
      end;
      return No_FD;
   end Listen_On;

   function Local_Address (Socket : FD; Address : out Socket_Address) return Boolean is
      Length : aliased unsigned := 28;
   begin
      Address := (others => <>);
      if c_getsockname (int (Socket), Address.Bytes'Address, Length'Access) /= 0 then
         return False;
      end if;
      Address.Length := Natural (Length);
      return True;
   end Local_Address;

   procedure Accept_Connection (Listener : FD; Socket : out FD; Result : out Accept_Result) is
      S : constant int :=
        c_accept4 (int (Listener), System.Null_Address, System.Null_Address,
                   SOCK_NONBLOCK + SOCK_CLOEXEC);
      No_Delay : Boolean with Unreferenced;
   begin
      Socket := No_FD;
      if S < 0 then
         Result := (if Last_Error in EINTR | ECONNABORTED then Retry else Stop);
         return;
      end if;
      No_Delay := Set_Option (S, IPPROTO_TCP, TCP_NODELAY);  --  only latency is at stake
      Socket := FD (S);
      Result := Accepted;
   end Accept_Connection;

   function Outcome (N : long) return Integer is
     (if N >= 0 then Integer (N)
      elsif Last_Error = EAGAIN then Would_Block
      elsif Last_Error = EINTR then Interrupted
      else Failed);

   function Receive (Socket : FD; Into : System.Address; Length : Natural) return Integer is
     (Outcome (c_recv (int (Socket), Into, size_t (Length), 0)));

   function Send (Socket : FD; From : System.Address; Length : Natural) return Integer is
     (Outcome (c_send (int (Socket), From, size_t (Length), MSG_NOSIGNAL)));

   function Shut_Write (Socket : FD) return Boolean is
     (c_shutdown (int (Socket), SHUT_WR) = 0);

   procedure Close (Socket : FD) is
      Ignored : constant int := c_close (int (Socket));
   begin
      null;
   end Close;

   function Epoll_Create return FD is (FD (c_epoll_create1 (SOCK_CLOEXEC)));

   function Epoll_Add
     (Poll : FD; Socket : FD; Events : Event_Mask; Token : Interfaces.Unsigned_64) return Boolean
   is
      E : aliased Event := (Events => Events, Token => Token);
   begin
      return c_epoll_ctl (int (Poll), EPOLL_CTL_ADD, int (Socket), E'Address) = 0;
   end Epoll_Add;

   procedure Epoll_Delete (Poll : FD; Socket : FD) is
      E : aliased Event := (Events => 0, Token => 0);
      Ignored : constant int := c_epoll_ctl (int (Poll), EPOLL_CTL_DEL, int (Socket), E'Address);
   begin
      null;
   end Epoll_Delete;

   function Epoll_Wait (Poll : FD; Events : in out Event_Array; Timeout_MS : Integer) return Integer
   is
      N : constant int :=
        c_epoll_wait (int (Poll), Events'Address, int (Events'Length), int (Timeout_MS));
   begin
      if N < 0 then
         return (if Last_Error = EINTR then 0 else -1);
      end if;
      return Integer (N);
   end Epoll_Wait;

   function Monotonic return Nanoseconds is
      T : Long_Array;
   begin
      if c_clock_gettime (CLOCK_MONOTONIC, T) /= 0 then
         return 0;
      end if;
      return Nanoseconds (T (1)) * Second + Nanoseconds (T (2));
   end Monotonic;

   function Unix_Seconds return Interfaces.Integer_64 is
     (Interfaces.Integer_64 (c_time (System.Null_Address)));

   function Entropy return Interfaces.Unsigned_64 is
      Value : aliased Interfaces.Unsigned_64 := 0;
   begin
      while c_getrandom (Value'Address, 8, 0) /= 8 loop
         null;  --  interrupted before any octet: try again
      end loop;
      return Value;
   end Entropy;

   Signal_FD : int := -1 with Volatile;

   procedure On_Signal (Signum : int) with Convention => C;
   procedure On_Signal (Signum : int) is
      pragma Unreferenced (Signum);
      One     : aliased Interfaces.Unsigned_64 := 1;
      Ignored : constant long := c_write (Signal_FD, One'Address, 8);
   begin
      null;
   end On_Signal;

   function Shutdown_Signal return FD is
      SIG_IGN : constant System.Address := System'To_Address (1);
      Ignored : System.Address;
   begin
      Signal_FD := c_eventfd (0, SOCK_CLOEXEC + SOCK_NONBLOCK);
      if Signal_FD < 0 then
         return No_FD;
      end if;
      Ignored := c_signal (SIGTERM, On_Signal'Address);
      Ignored := c_signal (SIGINT, On_Signal'Address);
      Ignored := c_signal (SIGPIPE, SIG_IGN);
      return FD (Signal_FD);
   end Shutdown_Signal;

   procedure Raise_Descriptor_Limit is
      Limit  : Long_Array;
      Raised : Boolean with Unreferenced;
   begin
      if c_getrlimit (RLIMIT_NOFILE, Limit) = 0 and then Limit (1) /= Limit (2) then
         Limit (1) := Limit (2);
         --  On failure the cap is bounded by the soft limit.
         Raised := c_setrlimit (RLIMIT_NOFILE, Limit) = 0;
      end if;
   end Raise_Descriptor_Limit;

   function CPUs_Available return Positive is
      Mask  : Octets (0 .. 127) := (others => 0);
      Count : Natural := 0;
   begin
      if c_sched_getaffinity (0, 128, Mask'Address) /= 0 then
         return 1;
      end if;
      for B of Mask loop
         for Bit in 0 .. 7 loop
            if Interfaces."=" (Interfaces."and" (Interfaces.Shift_Right (B, Bit), 1), 1) then
               Count := Count + 1;
            end if;
         end loop;
      end loop;
      return Positive'Max (1, Count);
   end CPUs_Available;

end Renard.OS;
