with AUnit;                   use AUnit;
with AUnit.Assertions;        use AUnit.Assertions;
with AUnit.Simple_Test_Cases;
with Interfaces;              use Interfaces;
with Parse_Rows;              use Parse_Rows;
with Renard;                  use Renard;
with Renard.Requests;         use Renard.Requests;
with Renard.Responses;
with Renard.Seeds;
with Seed_Vectors;         use type Seed_Vectors.Text;

package body Renard_Tests is

   function To_Octets (S : String) return Octets is
      R : Octets (0 .. S'Length - 1);
   begin
      for I in R'Range loop
         R (I) := Character'Pos (S (S'First + I));
      end loop;
      return R;
   end To_Octets;

   function Image (R : Parse_Result) return String is
     (case R.Kind is
         when Complete => "complete " & R.Head.Target'Image,
         when Need_More => "need more",
         when Error => "error " & R.Status'Image);

   function Matches (R : Parse_Result; Want : Expected) return Boolean is
     (case Want is
         when Parse_Rows.Redirect => R.Kind = Complete and then R.Head.Target = Redirect,
         when Parse_Rows.Health => R.Kind = Complete and then R.Head.Target = Health,
         when Parse_Rows.Not_Found => R.Kind = Complete and then R.Head.Target = Not_Found,
         when Parse_Rows.Method_Not_Allowed =>
            R.Kind = Complete and then R.Head.Target = Method_Not_Allowed,
         when Parse_Rows.Need_More => R.Kind = Need_More,
         when E400 => R.Kind = Error and then R.Status = Bad_Request,
         when E414 => R.Kind = Error and then R.Status = URI_Too_Long,
         when E431 => R.Kind = Error and then R.Status = Fields_Too_Large,
         when E501 => R.Kind = Error and then R.Status = Not_Implemented,
         when E505 => R.Kind = Error and then R.Status = Version_Not_Supported);

   --  The head fed in two reads, split after First octets, as a connection feeds it.
   function Parse_Split (Input : Octets; First : Natural) return Parse_Result is
      P       : Progress := New_Head;
      Dropped : Natural := 0;
      R       : Parse_Result := Parse_More (Input (0 .. First - 1), P);
   begin
      if R.Kind = Need_More then
         Dropped := R.Empty_Lines;
         R := Parse_More (Input (Dropped .. Input'Last), P);
         if R.Kind = Complete then
            R.Head.Head_Length := R.Head.Head_Length + Dropped;
         elsif R.Kind = Need_More then
            R.Empty_Lines := R.Empty_Lines + Dropped;
         end if;
      end if;
      return R;
   end Parse_Split;

   --  One row of a table (Parse_Rows, the seed vectors): the check given the row's index.
   type Row_Check is access procedure (Index : Positive);
   type Row_Test is new Simple_Test_Cases.Test_Case with record
      Title : Message_String;
      Check : Row_Check;
      Index : Positive;
   end record;
   overriding function Name (T : Row_Test) return Message_String is (T.Title);
   overriding procedure Run_Test (T : in out Row_Test);
   overriding procedure Run_Test (T : in out Row_Test) is
   begin
      T.Check (T.Index);
   end Run_Test;

   function Row_Case (Title : String; Check : Row_Check; Index : Positive)
     return Simple_Test_Cases.Test_Case_Access
   is (new Row_Test'(Simple_Test_Cases.Test_Case with Format (Title), Check, Index));

   --  One row of Parse_Rows.
   procedure Check_Parse_Row (Index : Positive) is
      Row   : constant Parse_Rows.Row := Rows (Index);
      Input : constant Octets := To_Octets (Row.Input.all);
      Whole : constant Parse_Result := Parse (Input);
      Step  : constant Positive := (if Input'Length > 300 then 997 else 1);
   begin
      Assert (Matches (Whole, Row.Want), "whole: got " & Image (Whole));
      if Whole.Kind = Complete then
         Assert (Whole.Head.Head_Length = Input'Length, "the head is the whole input");
      end if;
      for First in 1 .. Input'Length - 1 loop
         if First mod Step = 0 or First < 64 then
            declare
               Split : constant Parse_Result := Parse_Split (Input, First);
            begin
               Assert (Matches (Split, Row.Want),
                       "split at" & First'Image & ": got " & Image (Split));
            end;
         end if;
      end loop;
   end Check_Parse_Row;

   --  One vector of spec/vectors/seeds.json.
   procedure Check_Seed (Index : Positive) is
      V     : constant Seed_Vectors.Vector := Seed_Vectors.Vectors (Index);
      Found : Boolean;
      H     : Seeds.Hash;
      N     : constant Image_Count := Image_Count (V.N);
   begin
      Seeds.Find_Seed (To_Octets ("/?" & V.Query.all), Found, H);
      Assert (Found = (V.Seed /= null), "seed found:" & Found'Image);
      if V.Seed /= null then
         Assert (H = Seeds.FNV1a_64 (To_Octets (V.Seed.all)), "hash of the decoded seed");
         Assert (Natural (Seeds.K_For (H, N)) = V.K, "k =" & Seeds.K_For (H, N)'Image);
         --  And through the parser, as a request.
         declare
            R : constant Parse_Result :=
              Parse (To_Octets ("GET /?" & V.Query.all & " HTTP/1.1" & ASCII.CR & ASCII.LF
                                & "Host: x" & ASCII.CR & ASCII.LF & ASCII.CR & ASCII.LF));
         begin
            if R.Kind = Complete then
               Assert (R.Head.Seeded and then R.Head.Seed_Hash = H, "parsed seed");
            end if;
         end;
      end if;
   end Check_Seed;

   --  A test named by what it proves, with its body.
   type Check_Access is access procedure;
   type Named_Test is new Simple_Test_Cases.Test_Case with record
      Title : Message_String;
      Check : Check_Access;
   end record;
   overriding function Name (T : Named_Test) return Message_String is (T.Title);
   overriding procedure Run_Test (T : in out Named_Test);
   overriding procedure Run_Test (T : in out Named_Test) is
   begin
      T.Check.all;
   end Run_Test;

   CRLF : constant String := ASCII.CR & ASCII.LF;

   function Response
     (Kind : Responses.Answer; K : Image_Number := 1; Seeded : Boolean := False;
      Status : Reject := Bad_Request; Head_Method : Boolean := False;
      Connection : Responses.Persistence := Responses.Keep_Open) return String
   is
      Out_Buffer : String (1 .. 8192);
      Last       : Natural := 0;
      Date       : Responses.Date_Line;
   begin
      Responses.Update (Date, 1_795_305_600);  --  Sun, 22 Nov 2026 00:00:00 GMT
      Responses.Write (Out_Buffer, Last, Kind, K, Seeded, Status, Head_Method, Connection, Date);
      return Out_Buffer (1 .. Last);
   end Response;

   Date : constant String := "Date: Sun, 22 Nov 2026 00:00:00 GMT" & CRLF;

   procedure Seeded_Redirect_Octets is
   begin
      Assert (Response (Responses.Redirect, 7, Seeded => True) =
                "HTTP/1.1 302 Found" & CRLF
                & "Location: https://avatar.example.org/Renard-7.png" & CRLF
                & "Cache-Control: public, max-age=86400" & CRLF & Date
                & "Content-Length: 0" & CRLF & CRLF, "302 seeded");
   end Seeded_Redirect_Octets;

   procedure Random_Redirect_Keep_Alive_Octets is
   begin
      Assert (Response (Responses.Redirect, 21, Connection => Responses.Keep_Alive) =
                "HTTP/1.1 302 Found" & CRLF
                & "Location: https://avatar.example.org/Renard-21.png" & CRLF
                & "Cache-Control: no-store" & CRLF & Date
                & "Content-Length: 0" & CRLF & "Connection: keep-alive" & CRLF & CRLF,
              "302 random, HTTP/1.0 keep-alive");
   end Random_Redirect_Keep_Alive_Octets;

   procedure Health_Octets_Get_And_Head is
      Head : constant String := "HTTP/1.1 200 OK" & CRLF & "Content-Type: text/plain" & CRLF
        & "Cache-Control: no-store" & CRLF & Date & "Content-Length: 3" & CRLF & CRLF;
   begin
      Assert (Response (Responses.Health) = Head & "ok" & ASCII.LF, "GET /healthz");
      Assert (Response (Responses.Health, Head_Method => True) = Head, "HEAD /healthz");
   end Health_Octets_Get_And_Head;

   procedure Refusals_Close is
   begin
      Assert (Response (Responses.Refused, Status => Fields_Too_Large,
                        Connection => Responses.Close) =
                "HTTP/1.1 431 Request Header Fields Too Large" & CRLF & Date
                & "Content-Length: 0" & CRLF & "Connection: close" & CRLF & CRLF, "431");
      Assert (Response (Responses.Method_Not_Allowed) =
                "HTTP/1.1 405 Method Not Allowed" & CRLF & "Allow: GET, HEAD" & CRLF & Date
                & "Content-Length: 0" & CRLF & CRLF, "405");
   end Refusals_Close;

   procedure Date_Of_A_Leap_Day is
      D : Responses.Date_Line;
   begin
      Responses.Update (D, 951_782_400);  --  2000-02-29
      Assert (D.Line = "Date: Tue, 29 Feb 2000 00:00:00 GMT" & CRLF, D.Line);
      Responses.Update (D, 0);
      Assert (D.Line = "Date: Thu, 01 Jan 1970 00:00:00 GMT" & CRLF, D.Line);
   end Date_Of_A_Leap_Day;

   procedure Request_Facts is
      function P (S : String) return Parse_Result is (Parse (To_Octets (S)));
      R : Parse_Result := P ("GET / HTTP/1.1" & CRLF & "Host: x" & CRLF
                             & "Connection: foo, Close" & CRLF & CRLF);
   begin
      Assert (R.Kind = Complete and then not R.Head.Keep_Alive, "Connection: close");
      R := P ("GET / HTTP/1.0" & CRLF & "Connection: Keep-Alive" & CRLF & CRLF);
      Assert (R.Kind = Complete and then (R.Head.Keep_Alive and R.Head.HTTP_1_0), "1.0 keep-alive");
      R := P ("GET / HTTP/1.0" & CRLF & CRLF);
      Assert (R.Kind = Complete and then not R.Head.Keep_Alive, "1.0 closes");
      R := P ("POST /x HTTP/1.1" & CRLF & "Host: x" & CRLF & "Content-Length: 12" & CRLF
              & "Expect: 100-continue" & CRLF & CRLF);
      Assert (R.Kind = Complete and then (R.Head.Content_Length = 12
              and R.Head.Expect_Continue), "body length, Expect");
      R := P ("GET / HTTP/1.1" & CRLF & "Host: x" & CRLF & "Transfer-Encoding: chunked"
              & CRLF & CRLF);
      Assert (R.Kind = Complete and then R.Head.Chunked, "chunked");
      R := P ("HEAD /?r=7 HTTP/1.1" & CRLF & "Host: x" & CRLF & CRLF);
      Assert (R.Kind = Complete and then (R.Head.Head_Method and not R.Head.Seeded),
              "HEAD without a seed");
      R := P ("GET /?a=1&se%65d=x&seed=y HTTP/1.1" & CRLF & "Host: x" & CRLF & CRLF);
      Assert (R.Kind = Complete and then (R.Head.Seeded
              and R.Head.Seed_Hash = Seeds.FNV1a_64 (To_Octets ("x"))), "first decoded seed");
   end Request_Facts;

   procedure Leftover_Octets_Are_Not_The_Head is
      Two : constant Octets := To_Octets ("GET / HTTP/1.1" & CRLF & "Host: x" & CRLF & CRLF
                                          & "GET /healthz HTTP/1.1" & CRLF);
      R   : constant Parse_Result := Parse (Two);
   begin
      Assert (R.Kind = Complete and then R.Head.Head_Length = 27, "head length of the first");
   end Leftover_Octets_Are_Not_The_Head;

   procedure Longest_Template_At_The_Largest_Count is
      Placeholder : constant String := "{n}";
      Template : constant String := [for I in 1 .. 682 * 3 => Placeholder ((I - 1) mod 3 + 1)];
      Out_Buffer : String (1 .. 16_384);
      Last       : Natural := 0;
      Date       : Responses.Date_Line;
   begin
      --  682 placeholders of 7 digits: rendered per request (over the prerender budget),
      --  and the whole answer fits Max_Response.
      Responses.Configure (Template, Image_Count'Last);
      Responses.Update (Date, 0);
      Responses.Write
        (Out_Buffer, Last, Responses.Redirect, K => Image_Count'Last, Date => Date);
      Assert (Last <= Responses.Max_Response, "within Max_Response");
      Assert (Out_Buffer (31 .. 37) = "1000000" and Last = 30 + 682 * 7 + 2 + 25 + 37 + 19 + 2,
              "rendered:" & Last'Image);
      Responses.Configure ("https://avatar.example.org/Renard-{n}.png", 21);
   end Longest_Template_At_The_Largest_Count;

   function Named (Title : String; Check : Check_Access) return Simple_Test_Cases.Test_Case_Access
   is (new Named_Test'(Simple_Test_Cases.Test_Case with Title => Format (Title), Check => Check));

   function Suite return AUnit.Test_Suites.Access_Test_Suite is
      S : constant AUnit.Test_Suites.Access_Test_Suite := new AUnit.Test_Suites.Test_Suite;
   begin
      Responses.Configure ("https://avatar.example.org/Renard-{n}.png", 21);
      for I in Rows'Range loop
         S.Add_Test (Row_Case ("parse: " & Rows (I).Name.all, Check_Parse_Row'Access, I));
      end loop;
      for I in Seed_Vectors.Vectors'Range loop
         S.Add_Test
           (Row_Case ("seed: " & Seed_Vectors.Vectors (I).Name.all, Check_Seed'Access, I));
      end loop;
      S.Add_Test (Named ("response: 302 seeded, octet for octet", Seeded_Redirect_Octets'Access));
      S.Add_Test (Named ("response: 302 random with keep-alive",
                         Random_Redirect_Keep_Alive_Octets'Access));
      S.Add_Test (Named ("response: 200 on GET and HEAD", Health_Octets_Get_And_Head'Access));
      S.Add_Test (Named ("response: 431 closes, 405 allows", Refusals_Close'Access));
      S.Add_Test (Named ("response: Date is an IMF-fixdate", Date_Of_A_Leap_Day'Access));
      S.Add_Test (Named ("response: the longest template at N = 1000000",
                         Longest_Template_At_The_Largest_Count'Access));
      S.Add_Test (Named ("parse: persistence, body, Expect, chunked, seed",
                         Request_Facts'Access));
      S.Add_Test (Named ("parse: a pipelined head ends at its empty line",
                         Leftover_Octets_Are_Not_The_Head'Access));
      return S;
   end Suite;

end Renard_Tests;
