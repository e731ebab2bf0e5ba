package body Renard.Seeds is

   function FNV1a_64 (Data : Octets) return Hash is
      H : Hash := FNV_Offset;
   begin
      for B of Data loop
         H := Step (H, B);
      end loop;
      return H;
   end FNV1a_64;

   function K_For (H : Hash; N : Image_Count) return Image_Number is
     (Image_Number (H mod Hash (N) + 1));

   --  The value of a hex digit, or 16 when B is none.
   function Hex (B : Octet) return Octet is
     (case Character'Val (B) is
         when '0' .. '9' => B - Character'Pos ('0'),
         when 'a' .. 'f' => B - Character'Pos ('a') + 10,
         when 'A' .. 'F' => B - Character'Pos ('A') + 10,
         when others => 16);

   --  The form-urlencoded octet at S (I), I advanced past it: `+` is 0x20, `%XY` that
   --  octet, any other `%` stays literal.
   procedure Decode_Next (S : Octets; I : in out Natural; B : out Octet)
     with Pre => I in S'Range, Post => I > I'Old and I <= S'Last + 1
   is
   begin
      B := S (I);
      I := I + 1;
      if B = Character'Pos ('+') then
         B := 16#20#;
      elsif B = Character'Pos ('%') and then I + 1 <= S'Last
        and then Hex (S (I)) < 16 and then Hex (S (I + 1)) < 16
      then
         B := Hex (S (I)) * 16 + Hex (S (I + 1));
         I := I + 2;
      end if;
   end Decode_Next;

   --  Whether S decodes to exactly "seed".
   function Is_Seed_Name (S : Octets) return Boolean is
      Word : constant String := "seed";
      I    : Natural := S'First;
      W    : Natural := Word'First;
      B    : Octet;
   begin
      while I <= S'Last loop
         if W > Word'Last then
            return False;
         end if;
         Decode_Next (S, I, B);
         if B /= Character'Pos (Word (W)) then
            return False;
         end if;
         W := W + 1;
      end loop;
      return W > Word'Last;
   end Is_Seed_Name;

   function Index_Of (S : Octets; From : Natural; C : Character) return Natural is
   begin
      for I in From .. S'Last loop
         if S (I) = Character'Pos (C) then
            return I;
         end if;
      end loop;
      return S'Last + 1;
   end Index_Of;

   procedure Find_Seed (Target : Octets; Found : out Boolean; Seed_Hash : out Hash) is
      Question : constant Natural := Index_Of (Target, Target'First, '?');
      At_Param : Natural := Question + 1;
   begin
      Found := False;
      Seed_Hash := 0;
      if Question > Target'Last then
         return;
      end if;
      loop
         declare
            Stop   : constant Natural := Index_Of (Target, At_Param, '&');
            Equals : constant Natural := Index_Of (Target (At_Param .. Stop - 1), At_Param, '=');
         begin
            if Is_Seed_Name (Target (At_Param .. Equals - 1)) then
               declare
                  Value : Octets renames Target (Equals + 1 .. Stop - 1);
                  I     : Natural := Value'First;
                  H     : Hash := FNV_Offset;
                  B     : Octet;
               begin
                  while I <= Value'Last loop
                     Decode_Next (Value, I, B);
                     H := Step (H, B);
                  end loop;
                  Found := True;
                  Seed_Hash := H;
                  return;
               end;
            end if;
            exit when Stop > Target'Last;
            At_Param := Stop + 1;
         end;
      end loop;
   end Find_Seed;

end Renard.Seeds;
