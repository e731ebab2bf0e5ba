--  The AUnit suite: every parsing rule (whole and split in two reads), every seed vector,
--  the response octets.
with AUnit.Test_Suites;

package Renard_Tests is
   function Suite return AUnit.Test_Suites.Access_Test_Suite;
end Renard_Tests;
