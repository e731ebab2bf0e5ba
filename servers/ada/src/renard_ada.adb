--  renard: answers GET / with a 302 to a random avatar (spec/SPEC.md).
--
--  The story: the configuration, the listeners (one SO_REUSEPORT socket per thread on
--  the port the first got), the shutdown signal, one event loop per thread (the first on
--  the main task), exit 0 once every loop has drained.
with Ada.Command_Line;
with Ada.Text_IO;
with GNAT.OS_Lib;
with Renard.Config;
with Renard.OS;
with Renard.Responses;
with Renard.Servers;

procedure Renard_Ada is
   use Renard;
   use type OS.FD;

   Shared  : Servers.Shared;
   Command : Config.Command;
   Error   : String (1 .. 512);
   Error_Length : Natural;

   procedure Say (Line : String) is
   begin
      Ada.Text_IO.Put_Line (Ada.Text_IO.Standard_Error, Line);
      Ada.Text_IO.Flush (Ada.Text_IO.Standard_Error);
   end Say;

   procedure Cannot_Bind (Address : String; Code : Integer) is
   begin
      Say ("renard: --listen: cannot bind " & Address & ": " & OS.Error_Message (Code));
      GNAT.OS_Lib.OS_Exit (1);
   end Cannot_Bind;

begin
   Config.Read (OS.CPUs_Available, Command, Shared.Settings, Error, Error_Length);
   case Command is
      when Config.Show_Help =>
         Ada.Text_IO.Put (Config.Usage);
         return;
      when Config.Show_Version =>
         Ada.Text_IO.Put_Line ("renard " & Version);
         return;
      when Config.Refuse =>
         Say (Error (1 .. Error_Length));
         GNAT.OS_Lib.OS_Exit (2);
      when Config.Serve =>
         null;
   end case;
   OS.Raise_Descriptor_Limit;

   declare
      S         : Config.Settings renames Shared.Settings;
      Wanted    : constant String := OS.Image (S.Listen);
      Listeners : array (1 .. S.Threads) of OS.FD := (others => OS.No_FD);
      Bound     : OS.Socket_Address;
   begin
      Listeners (1) := OS.Listen_On (S.Listen);
      if Listeners (1) = OS.No_FD or else not OS.Local_Address (Listeners (1), Bound) then
         Cannot_Bind (Wanted, OS.Last_Error);
      end if;
      for T in 2 .. S.Threads loop
         Listeners (T) := OS.Listen_On (Bound);
         if Listeners (T) = OS.No_FD then
            Cannot_Bind (Wanted, OS.Last_Error);
         end if;
      end loop;

      Shared.Shutdown := OS.Shutdown_Signal;
      if Shared.Shutdown = OS.No_FD then
         Say ("renard: eventfd: " & OS.Error_Message (OS.Last_Error));
         GNAT.OS_Lib.OS_Exit (1);
      end if;
      Responses.Configure (S.Location (1 .. S.Location_Length), S.Count);
      Say ("listening on http://" & OS.Image (Bound));

      declare
         task type Loop_Task (Listener : OS.FD) with Storage_Size => 256 * 1024;
         type Loop_Access is access Loop_Task;
         Failed : Boolean := False with Atomic;

         task body Loop_Task is
         begin
            if not Servers.Run (Shared, Listener) then
               Failed := True;
            end if;
         end Loop_Task;

         Loops : array (2 .. S.Threads) of Loop_Access;
      begin
         for T in Loops'Range loop
            Loops (T) := new Loop_Task (Listeners (T));
         end loop;
         if not Servers.Run (Shared, Listeners (1)) then
            Failed := True;
         end if;
         --  The block ends when every task has ended.
      end;
   end;
   Ada.Command_Line.Set_Exit_Status (Ada.Command_Line.Success);
end Renard_Ada;
