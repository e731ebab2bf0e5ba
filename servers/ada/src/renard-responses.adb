package body Renard.Responses is

   use Interfaces;

   CRLF           : constant String := ASCII.CR & ASCII.LF;
   Redirect_Start : constant String := "HTTP/1.1 302 Found" & CRLF & "Location: ";
   Empty_Body      : constant String := "Content-Length: 0" & CRLF;
   Ok_Length       : constant String := "Content-Length: 3" & CRLF;
   Ok_Body         : constant String := "ok" & ASCII.LF;
   Keep_Alive_Line : constant String := "Connection: keep-alive" & CRLF;
   Close_Line      : constant String := "Connection: close" & CRLF;

   type String_Access is access constant String;
   type Ends_Array is array (Image_Count range <>) of Positive;
   type Ends_Access is access constant Ends_Array;

   --  The configuration, set once before the loops start and read-only after.
   The_Template : String_Access;
   Placeholders : Natural := 0;
   --  Every "HTTP/1.1 302 Found\r\nLocation: ...\r\n", concatenated; null when over budget.
   Heads        : String_Access;
   Head_Ends    : Ends_Access;  --  Head_Ends (k): where k's head ends in Heads
   Longest      : Positive := 1;  --  Max_Response

   function Decimal (N : Natural) return String is
      Image : constant String := N'Image;
   begin
      return Image (Image'First + 1 .. Image'Last);
   end Decimal;

   --  Append S to Output after Last.
   procedure Put (Output : in out String; Last : in out Natural; S : String) with Inline is
   begin
      Output (Last + 1 .. Last + S'Length) := S;
      Last := Last + S'Length;
   end Put;

   --  The 302 status line and Location line for k, rendered from the template.
   procedure Render_Head (Output : in out String; Last : in out Natural; K : Image_Number) is
      T : String renames The_Template.all;
      I : Natural := T'First;
   begin
      Put (Output, Last, Redirect_Start);
      while I <= T'Last loop
         if I + 2 <= T'Last and then T (I .. I + 2) = "{n}" then
            Put (Output, Last, Decimal (Natural (K)));
            I := I + 3;
         else
            Last := Last + 1;
            Output (Last) := T (I);
            I := I + 1;
         end if;
      end loop;
      Put (Output, Last, CRLF);
   end Render_Head;

   function Head_Length_Bound return Positive is
     (Redirect_Start'Length + The_Template'Length + 4 * Placeholders + 2);

   procedure Configure (Template : String; Count : Image_Count) is
   begin
      The_Template := new String'(Template);
      Placeholders := 0;
      for I in Template'First .. Template'Last - 2 loop
         if Template (I .. I + 2) = "{n}" then
            Placeholders := Placeholders + 1;
         end if;
      end loop;
      Longest := Head_Length_Bound + 256 + Date_Line_Length;
      Heads := null;  --  the previous configuration's, if any (tests)
      Head_Ends := null;
      if Natural (Count) <= Prerender_Budget / Head_Length_Bound then
         declare
            Buffer : String (1 .. Natural (Count) * Head_Length_Bound);
            Last   : Natural := 0;
            Ends   : Ends_Array (1 .. Count);
         begin
            for K in Ends'Range loop
               Render_Head (Buffer, Last, K);
               Ends (K) := Last;
            end loop;
            Heads := new String'(Buffer (1 .. Last));
            Head_Ends := new Ends_Array'(Ends);
         end;
      end if;
   end Configure;

   function Max_Response return Positive is (Longest);

   Days   : constant array (0 .. 6) of String (1 .. 3) :=
     ("Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed");  --  1970-01-01 was a Thursday
   Months : constant array (1 .. 12) of String (1 .. 3) :=
     ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec");

   function Two (N : Integer_64) return String is
     (Character'Val (Character'Pos ('0') + Integer (N / 10)) &
      Character'Val (Character'Pos ('0') + Integer (N mod 10)));

   procedure Update (Date : in out Date_Line; Unix_Seconds : Integer_64) is
      Days_Since : constant Integer_64 := Unix_Seconds / 86_400;
      In_Day     : constant Integer_64 := Unix_Seconds mod 86_400;
      --  Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
      Z   : constant Integer_64 := Days_Since + 719_468;
      Era : constant Integer_64 := Z / 146_097;
      DOE : constant Integer_64 := Z - Era * 146_097;
      YOE : constant Integer_64 := (DOE - DOE / 1460 + DOE / 36_524 - DOE / 146_096) / 365;
      DOY : constant Integer_64 := DOE - (365 * YOE + YOE / 4 - YOE / 100);
      MP  : constant Integer_64 := (5 * DOY + 2) / 153;
      Day : constant Integer_64 := DOY - (153 * MP + 2) / 5 + 1;
      Month : constant Integer_64 := (if MP < 10 then MP + 3 else MP - 9);
      Year  : constant Integer_64 := YOE + Era * 400 + (if Month <= 2 then 1 else 0);
   begin
      if Unix_Seconds = Date.Second then
         return;
      end if;
      Date.Second := Unix_Seconds;
      Date.Line :=
        "Date: " & Days (Integer (Days_Since mod 7)) & ", " & Two (Day) & " "
        & Months (Integer (Month)) & " " & Two (Year / 100) & Two (Year mod 100) & " "
        & Two (In_Day / 3600) & ":" & Two (In_Day / 60 mod 60) & ":" & Two (In_Day mod 60)
        & " GMT" & CRLF;
   end Update;

   function Status_Line (Status : Requests.Reject) return String is
     (case Status is
         when Requests.Bad_Request           => "HTTP/1.1 400 Bad Request",
         when Requests.Request_Timeout       => "HTTP/1.1 408 Request Timeout",
         when Requests.URI_Too_Long          => "HTTP/1.1 414 URI Too Long",
         when Requests.Fields_Too_Large      => "HTTP/1.1 431 Request Header Fields Too Large",
         when Requests.Not_Implemented       => "HTTP/1.1 501 Not Implemented",
         when Requests.Version_Not_Supported => "HTTP/1.1 505 HTTP Version Not Supported");

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
   is
   begin
      case Kind is
         when Redirect =>
            if Heads /= null then
               declare
                  First : constant Positive :=
                    (if K = 1 then 1 else Head_Ends (K - 1) + 1);
               begin
                  Put (Output, Last, Heads (First .. Head_Ends (K)));
               end;
            else
               Render_Head (Output, Last, K);
            end if;
            if Seeded then
               Put (Output, Last, "Cache-Control: public, max-age=86400" & CRLF);
            else
               Put (Output, Last, "Cache-Control: no-store" & CRLF);
            end if;
         when Health =>
            Put (Output, Last, "HTTP/1.1 200 OK" & CRLF & "Content-Type: text/plain" & CRLF
                 & "Cache-Control: no-store" & CRLF);
         when Not_Found =>
            Put (Output, Last, "HTTP/1.1 404 Not Found" & CRLF);
         when Method_Not_Allowed =>
            Put (Output, Last, "HTTP/1.1 405 Method Not Allowed" & CRLF
                 & "Allow: GET, HEAD" & CRLF);
         when Refused =>
            Put (Output, Last, Status_Line (Status) & CRLF);
      end case;
      Put (Output, Last, Date.Line);
      --  The rest in one copy of a constant.
      if Kind /= Health then
         case Connection is
            when Keep_Open => Put (Output, Last, Empty_Body & CRLF);
            when Keep_Alive => Put (Output, Last, Empty_Body & Keep_Alive_Line & CRLF);
            when Close => Put (Output, Last, Empty_Body & Close_Line & CRLF);
         end case;
      elsif Head_Method then
         case Connection is
            when Keep_Open => Put (Output, Last, Ok_Length & CRLF);
            when Keep_Alive => Put (Output, Last, Ok_Length & Keep_Alive_Line & CRLF);
            when Close => Put (Output, Last, Ok_Length & Close_Line & CRLF);
         end case;
      else
         case Connection is
            when Keep_Open => Put (Output, Last, Ok_Length & CRLF & Ok_Body);
            when Keep_Alive => Put (Output, Last, Ok_Length & Keep_Alive_Line & CRLF & Ok_Body);
            when Close => Put (Output, Last, Ok_Length & Close_Line & CRLF & Ok_Body);
         end case;
      end if;
   end Write;

end Renard.Responses;
