--  renard: answers GET / with a 302 to a random avatar (spec/SPEC.md).
--  The root package holds the types every part shares.
with Interfaces;

package Renard is
   pragma Pure;

   Version : constant String := "0.1.0";

   subtype Octet is Interfaces.Unsigned_8;
   --  Octets as received; every buffer of this type is indexed from 0.
   type Octets is array (Natural range <>) of Octet;

   --  N, the number of images (SPEC §1), and k, the one chosen (SPEC §3).
   Max_Count : constant := 1_000_000;
   type Image_Count is range 1 .. Max_Count;
   subtype Image_Number is Image_Count;

   --  Monotonic or wall time in nanoseconds.
   type Nanoseconds is range -(2**63) .. 2**63 - 1;
   Second : constant Nanoseconds := 1_000_000_000;
   Never  : constant Nanoseconds := Nanoseconds'Last;
end Renard;
