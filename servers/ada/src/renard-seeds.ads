--  The seeded choice (SPEC §3, §3.1): FNV-1a-64 over the decoded value of the query's
--  first `seed` parameter, and k = hash mod N + 1. Nothing is allocated.
with Interfaces; use Interfaces;

package Renard.Seeds is
   pragma Pure;

   subtype Hash is Unsigned_64;
   FNV_Offset : constant Hash := 16#CBF2_9CE4_8422_2325#;
   FNV_Prime  : constant Hash := 16#0000_0100_0000_01B3#;

   --  One FNV-1a step: the hash H followed by octet B.
   function Step (H : Hash; B : Octet) return Hash is ((H xor Hash (B)) * FNV_Prime);

   function FNV1a_64 (Data : Octets) return Hash
     with Post => (if Data'Length = 0 then FNV1a_64'Result = FNV_Offset
                   elsif Data'Length = 1
                   then FNV1a_64'Result = Step (FNV_Offset, Data (Data'First)));

   --  k for a seed whose hash is H (SPEC §3).
   function K_For (H : Hash; N : Image_Count) return Image_Number
     with Post => K_For'Result = Image_Number (H mod Hash (N) + 1);

   --  The hash of the seed in the request-target (path and query) Target, if its query
   --  has a parameter whose decoded name is `seed` (SPEC §3.1).
   procedure Find_Seed (Target : Octets; Found : out Boolean; Seed_Hash : out Hash)
     with Post => (if not Found then Seed_Hash = 0);

end Renard.Seeds;
