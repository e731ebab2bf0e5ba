--  Request heads (SPEC §2, §5, §6, §7.1): one entry point, Parse_More, with three
--  outcomes: a complete request, a need for more octets, or an error with the spec's
--  status. Resumable across reads (a dripped head costs O(n) in total); never allocates;
--  the caller owns the octets.
with Renard.Seeds;

package Renard.Requests is

   Max_Request_Line  : constant := 8192;   --  octets, without the line end (rule 3)
   Max_Field_Section : constant := 16384;  --  octets after the request line (rule 6)
   Max_Field_Lines   : constant := 100;    --  rule 6
   Max_Input         : constant := 2**20;  --  most octets one call looks at

   subtype Input_Length is Natural range 0 .. Max_Input;
   --  A position in the head, counted from its first octet.
   subtype Head_Position is Natural range 0 .. Max_Input;

   --  Why a request is refused; each one ends the connection (SPEC §7.2).
   type Reject is
     (Bad_Request,           --  400
      Request_Timeout,       --  408 (decided by the connection, not the parser)
      URI_Too_Long,          --  414
      Fields_Too_Large,      --  431
      Not_Implemented,       --  501
      Version_Not_Supported  --  505
     );

   --  What the route of a well-formed request answers (SPEC §2).
   type Route is (Redirect, Health, Not_Found, Method_Not_Allowed);

   --  Content-Length: 1 to 18 digits (rule 8).
   type Body_Length is range 0 .. 10**18 - 1;

   --  A complete, valid request head.
   type Request is record
      Head_Length     : Head_Position := 0;  --  leading empty lines included
      Target          : Route := Not_Found;
      Seeded          : Boolean := False;    --  Redirect: the query has a seed ...
      Seed_Hash       : Seeds.Hash := 0;     --  ... whose FNV-1a-64 is this
      Head_Method     : Boolean := False;    --  HEAD: no body in the answer
      HTTP_1_0        : Boolean := False;    --  else HTTP/1.1
      Keep_Alive      : Boolean := False;    --  persists by its own terms (SPEC §7.1)
      Content_Length  : Body_Length := 0;    --  body octets to discard (SPEC §6)
      Chunked         : Boolean := False;    --  answer, then close
      Expect_Continue : Boolean := False;    --  HTTP/1.1 100-continue with a body: close
   end record;

   type Outcome is (Complete, Need_More, Error);

   type Parse_Result (Kind : Outcome := Need_More) is record
      case Kind is
         when Complete =>
            Head : Request;
         when Need_More =>
            --  Leading empty-line octets the caller drops before calling again.
            Empty_Lines : Input_Length := 0;
         when Error =>
            Status : Reject := Bad_Request;
      end case;
   end record;

   --  Where the pass over one head stands; New_Head before its first octet.
   type Progress is private;
   New_Head : constant Progress;

   --  Octets of the current head already looked at.
   function Position (P : Progress) return Head_Position;

   --  Go on with the head at the start of Input from where P stands (SPEC §5: every check
   --  of rules 1-6 at the octet that decides it; rules 7-9 at the empty line). After
   --  Need_More the caller drops Empty_Lines octets and calls again with the same octets
   --  and more after them; after Complete or Error it starts the next head with New_Head.
   function Parse_More (Input : Octets; P : in out Progress) return Parse_Result
     with Pre  => Input'Length <= Max_Input and then Position (P) <= Input'Length,
          Post => (case Parse_More'Result.Kind is
                      when Complete  =>
                        Parse_More'Result.Head.Head_Length in 1 .. Input'Length
                        and then (if Parse_More'Result.Head.Target /= Redirect
                                  then not Parse_More'Result.Head.Seeded),
                      when Need_More =>
                        Parse_More'Result.Empty_Lines + Position (P) <= Input'Length,
                      when Error     =>
                        Parse_More'Result.Status /= Request_Timeout);

   --  A whole head from scratch (tests).
   function Parse (Input : Octets) return Parse_Result
     with Pre => Input'Length <= Max_Input;

private

   type Parse_State is (Start, Method, Target, Version, Line_Start, Name, Value_Start, Value);
   type Field is (Other, Host, Content_Length, Transfer_Encoding, Connection, Expect);

   subtype Line_Count is Natural range 0 .. 255;  --  saturating

   --  The fields rules 7, 8 and SPEC §7.1 read, gathered as the field lines pass.
   type Facts is record
      Host_Lines, Content_Length_Lines, Transfer_Encoding_Lines : Line_Count := 0;
      Bad_Host             : Boolean := False;
      Content_Length_Valid : Boolean := False;  --  the last Content-Length is well formed
      Content_Length       : Body_Length := 0;
      TE_Start, TE_End     : Head_Position := 0;  --  the last Transfer-Encoding value
      Close, Keep_Alive, Expect_Continue : Boolean := False;
   end record;

   type Progress is record
      Pos          : Head_Position := 0;
      State        : Parse_State := Start;
      Current      : Field := Other;
      HTTP_1_0     : Boolean := False;
      Line_Start   : Head_Position := 0;
      Value_Start  : Head_Position := 0;
      Method_End   : Head_Position := 0;  --  the SP after the method
      Target_End   : Head_Position := 0;  --  the SP after the target
      Fields_Start : Head_Position := 0;
      Field_Lines  : Natural := 0;
      Known        : Facts;
   end record;

   New_Head : constant Progress := (others => <>);

   function Position (P : Progress) return Head_Position is (P.Pos);

end Renard.Requests;
