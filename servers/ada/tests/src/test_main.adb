--  Runs the suite with Test_Runner_With_Status (the exit status is 1 when a test fails)
--  and prints the closing line CI reads: `N passed, N failed`. When the variable
--  RENARD_AUNIT_JUNIT names a file, it also writes there AUnit's JUnit XML report, every
--  test a <testcase> (arena check counts the tests from it).
with Ada.Command_Line;
with Ada.Environment_Variables;
with Ada.Text_IO;
with AUnit;                 use AUnit;
with AUnit.Options;
with AUnit.Reporter.JUnit;
with AUnit.Reporter.Text;
with AUnit.Run;
with AUnit.Test_Results;
with Renard_Tests;

procedure Test_Main is

   type Counting_Reporter is new AUnit.Reporter.Text.Text_Reporter with null record;
   overriding procedure Report
     (Engine  : Counting_Reporter;
      R       : in out AUnit.Test_Results.Result'Class;
      Options : AUnit.Options.AUnit_Options := AUnit.Options.Default_Options);

   --  AUnit's JUnit reporter into the file Path (created or replaced), successes included.
   procedure Write_JUnit (Path : String; R : in out AUnit.Test_Results.Result'Class) is
      File     : aliased Ada.Text_IO.File_Type;
      Reporter : AUnit.Reporter.JUnit.JUnit_Reporter;
      Every    : AUnit.Options.AUnit_Options := AUnit.Options.Default_Options;
   begin
      Every.Report_Successes := True;
      Ada.Text_IO.Create (File, Ada.Text_IO.Out_File, Path);
      Reporter.Set_File (File'Unchecked_Access);
      Reporter.Report (R, Every);
      Ada.Text_IO.Close (File);
   end Write_JUnit;

   overriding procedure Report
     (Engine  : Counting_Reporter;
      R       : in out AUnit.Test_Results.Result'Class;
      Options : AUnit.Options.AUnit_Options := AUnit.Options.Default_Options)
   is
      Failed : constant Natural := Natural (R.Failure_Count) + Natural (R.Error_Count);
      Passed : constant Natural := Natural (R.Test_Count) - Failed;
   begin
      AUnit.Reporter.Text.Text_Reporter (Engine).Report (R, Options);
      if Ada.Environment_Variables.Exists ("RENARD_AUNIT_JUNIT") then
         Write_JUnit (Ada.Environment_Variables.Value ("RENARD_AUNIT_JUNIT"), R);
      end if;
      Ada.Text_IO.Put_Line
        (Passed'Image (2 .. Passed'Image'Last) & " passed," & Failed'Image & " failed");
   end Report;

   function Run is new AUnit.Run.Test_Runner_With_Status (Renard_Tests.Suite);
   Reporter : Counting_Reporter;
   Options  : AUnit.Options.AUnit_Options := AUnit.Options.Default_Options;
begin
   Options.Report_Successes := False;
   if Run (Reporter, Options) /= Success then
      Ada.Command_Line.Set_Exit_Status (Ada.Command_Line.Failure);
   end if;
end Test_Main;
