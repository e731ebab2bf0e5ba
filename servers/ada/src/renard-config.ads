--  The command line and environment (SPEC §1): flags, RENARD_* variables, defaults.
with Renard.OS;
with Renard.Responses;

package Renard.Config is

   Max_Seconds : constant Nanoseconds := 86_400 * Second;
   subtype Timeout is Nanoseconds range 0 .. Max_Seconds;
   subtype Thread_Count is Positive range 1 .. 1024;
   subtype Connection_Cap is Positive range 1 .. 1_000_000;

   type Settings is record
      Listen          : OS.Socket_Address;
      Count           : Image_Count := 21;
      Location        : String (1 .. Responses.Max_Template);
      Location_Length : Natural range 0 .. Responses.Max_Template := 0;
      Threads         : Thread_Count := 1;
      Header_Timeout  : Timeout := 10 * Second;  --  > 0
      Idle_Timeout    : Timeout := 60 * Second;  --  > 0
      Max_Connections : Connection_Cap := 10_000;
      Drain_Timeout   : Timeout := Second;
   end record;

   type Command is (Serve, Show_Help, Show_Version, Refuse);

   --  Read the arguments and the environment. Refuse: Error is the one line to print.
   procedure Read
     (CPUs : Positive; Result : out Command; S : out Settings; Error : out String;
      Error_Length : out Natural);

   Usage : constant String;

private
   NL : constant Character := ASCII.LF;
   Usage : constant String :=
     "usage: renard [--flag VALUE | --flag=VALUE]..." & NL & NL
     & "Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N" & NL
     & "(uniform, or FNV-1a-64 of ?seed=S mod N + 1)." & NL & NL
     & "  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 "
     & "(IPv6: [ADDR]:PORT)" & NL
     & "  --count N                RENARD_COUNT            default 21 (1 to 1000000)" & NL
     & "  --location TEMPLATE      RENARD_LOCATION         default "
     & "https://avatar.example.org/Renard-{n}.png" & NL
     & "  --threads N              RENARD_THREADS          default: CPUs available "
     & "(1 to 1024)" & NL
     & "  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)"
     & NL
     & "  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)"
     & NL
     & "  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)" & NL
     & "  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)"
     & NL
     & "  --help                   print this text" & NL
     & "  --version                print the version" & NL;
end Renard.Config;
