--  One row per parsing rule of SPEC §2 and §5: a head and the outcome it must give.
package Parse_Rows is

   type Expected is
     (Redirect, Health, Not_Found, Method_Not_Allowed,  --  complete, with this route
      Need_More,
      E400, E414, E431, E501, E505);                     --  an error with this status

   type Text is access constant String;
   type Row is record
      Name  : Text;
      Input : Text;
      Want  : Expected;
   end record;
   type Row_Array is array (Positive range <>) of Row;

   function Rows return Row_Array;

end Parse_Rows;
