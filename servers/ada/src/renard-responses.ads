--  Response octets (SPEC §4). What does not change is rendered once: the 302 status and
--  Location lines for every k (when they fit in Prerender_Budget, else from the template
--  per request), the fixed lines of every other status, and the Date line once a second.
with Interfaces;
with Renard.Requests;

package Renard.Responses is

   --  The Connection field a response carries (SPEC §4, §7).
   type Persistence is
     (Keep_Open,   --  HTTP/1.1 kept open: no field
      Keep_Alive,  --  HTTP/1.0 kept open: Connection: keep-alive
      Close);      --  the server closes after it: Connection: close

   type Answer is (Redirect, Health, Not_Found, Method_Not_Allowed, Refused);

   --  Longest template (SPEC §1) and most octets the prerendered heads may take.
   Max_Template     : constant := 2048;
   Prerender_Budget : constant := 256 * 1024;

   --  Set the template (visible ASCII with {n}) and N; before any Write.
   procedure Configure (Template : String; Count : Image_Count)
     with Pre => Template'Length in 1 .. Max_Template;

   --  The longest response any answer can produce, in octets.
   function Max_Response return Positive;

   --  "Date: <IMF-fixdate>\r\n" (RFC 9110 §5.6.7), re-rendered when the second changes.
   Date_Line_Length : constant := 37;
   type Date_Line is record
      Second : Interfaces.Integer_64 := Interfaces.Integer_64'First;
      Line   : String (1 .. Date_Line_Length) := (others => ' ');
   end record;
   procedure Update (Date : in out Date_Line; Unix_Seconds : Interfaces.Integer_64)
     with Pre => Interfaces.">=" (Unix_Seconds, 0);

   --  Append the whole response to Output after Last (room for Max_Response octets is the
   --  caller's). K and Seeded: Redirect; Status: Refused.
   procedure Write
     (Output      : in out String;
      Last        : in out Natural;
      Kind        : Answer;
      K           : Image_Number := 1;
      Seeded      : Boolean := False;
      Status      : Requests.Reject := Requests.Bad_Request;
      Head_Method : Boolean := False;
      Connection  : Persistence := Keep_Open;
      Date        : Date_Line)
     with Pre  => Last + Max_Response <= Output'Last,
          Post => Last > Last'Old and Last <= Last'Old + Max_Response;

end Renard.Responses;
