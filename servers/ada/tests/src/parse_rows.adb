package body Parse_Rows is

   CRLF : constant String := ASCII.CR & ASCII.LF;
   Host : constant String := "Host: x" & CRLF;

   function T (S : String) return Text is (new String'(S));

   function R (Name : String; Input : String; Want : Expected) return Row is
     (T (Name), T (Input), Want);

   --  A head: this request line, these field lines (a Host by default), the empty line.
   function Head (Line : String; Fields : String := Host) return String is
     (Line & CRLF & Fields & CRLF);

   --  A GET / with these field lines on HTTP/1.1.
   function Get (Fields : String; Version : String := "HTTP/1.1") return String is
     (Head ("GET / " & Version, Fields));

   function Many_Fields (N : Natural) return String is
     (if N = 0 then "" else "X-A: b" & CRLF & Many_Fields (N - 1));

   function Rows return Row_Array is
     ((R ("get root is a redirect", Get (Host), Redirect),
       R ("head root is a redirect", Head ("HEAD / HTTP/1.1"), Redirect),
       R ("healthz is health", Head ("GET /healthz HTTP/1.1"), Health),
       R ("post root is 405", Head ("POST / HTTP/1.1"), Method_Not_Allowed),
       R ("lowercase get is an unknown method, 405", Head ("get / HTTP/1.1"), Method_Not_Allowed),
       R ("delete healthz is 405", Head ("DELETE /healthz HTTP/1.1"), Method_Not_Allowed),
       R ("index.html is 404", Head ("GET /index.html HTTP/1.1"), Not_Found),
       R ("double slash is 404", Head ("GET // HTTP/1.1"), Not_Found),
       R ("encoded slash is 404", Head ("GET /%2F HTTP/1.1"), Not_Found),
       R ("fragment mark belongs to the path", Head ("GET /# HTTP/1.1"), Not_Found),
       R ("absolute-form http is routed", Head ("GET http://h/?seed=a HTTP/1.1"), Redirect),
       R ("absolute-form HTTPS without path is /", Head ("GET HTTPS://h HTTP/1.1"), Redirect),
       R ("absolute-form without host is 400", Head ("GET http:///x HTTP/1.1"), E400),
       R ("asterisk-form is 400", Head ("GET * HTTP/1.1"), E400),
       R ("authority-form is 400", Head ("GET h:80 HTTP/1.1"), E400),
       R ("rule 1: leading empty lines are skipped", CRLF & ASCII.LF & CRLF & Get (Host),
          Redirect),
       R ("rule 2: bare LF ends lines", "GET / HTTP/1.1" & ASCII.LF & "Host: x" & ASCII.LF
          & ASCII.LF, Redirect),
       R ("rule 2: CR without LF in a field is 400", "GET / HTTP/1.1" & CRLF & "Host: x"
          & ASCII.CR & "X" & CRLF & CRLF, E400),
       R ("rule 2: CR without LF at the head end is 400",
          "GET / HTTP/1.1" & CRLF & Host & ASCII.CR & "X", E400),
       R ("rule 2: CR without LF before the request line is 400", ASCII.CR & "GET", E400),
       R ("rule 3: request line over 8192 octets is 414",
          Head ("GET /" & (1 .. 8200 => 'a') & " HTTP/1.1"), E414),
       R ("rule 3: request line of 8192 octets is served",
          Head ("GET /" & (1 .. 8192 - 14 => 'a') & " HTTP/1.1"), Not_Found),
       R ("rule 3: long line is 414 before its end", "GET /" & (1 .. 8200 => 'a'), E414),
       R ("rule 3: method not a token is 400", Head ("G(T / HTTP/1.1"), E400),
       R ("rule 3: empty method is 400", Head (" / HTTP/1.1"), E400),
       R ("rule 3: control octet in target is 400",
          Head ("GET /" & ASCII.HT & " HTTP/1.1"), E400),
       R ("rule 3: non-ASCII in target is 400",
          Head ("GET /" & Character'Val (16#C3#) & " HTTP/1.1"), E400),
       R ("rule 3: two spaces is 400", Head ("GET  / HTTP/1.1"), E400),
       R ("rule 3: missing version is 400", Head ("GET /"), E400),
       R ("rule 3: trailing space is 400", Head ("GET / HTTP/1.1 "), E400),
       R ("rule 4: HTTP/2.0 is 505", Head ("GET / HTTP/2.0"), E505),
       R ("rule 4: HTTP/1.2 is 505", Head ("GET / HTTP/1.2"), E505),
       R ("rule 4: the HTTP/2 preface is 505", "PRI * HTTP/2.0" & CRLF & CRLF & "SM" & CRLF
          & CRLF, E505),
       R ("rule 4: HTTP/1 is 400", Head ("GET / HTTP/1"), E400),
       R ("rule 4: HTTP/01.1 is 400", Head ("GET / HTTP/01.1"), E400),
       R ("rule 4: lowercase http is 400", Head ("GET / http/1.1"), E400),
       R ("rule 4: HTTP/1.0 without Host is served", Get ("", "HTTP/1.0"), Redirect),
       R ("rule 5: obs-fold is 400", Get (Host & " folded" & CRLF), E400),
       R ("rule 5: space before the colon is 400", Get ("Host : x" & CRLF), E400),
       R ("rule 5: empty name is 400", Get (Host & ": x" & CRLF), E400),
       R ("rule 5: NUL in a value is 400", Get (Host & "A: b" & ASCII.NUL & CRLF), E400),
       R ("rule 5: DEL in a value is 400", Get (Host & "A: b" & ASCII.DEL & CRLF), E400),
       R ("rule 5: HTAB in a value is accepted", Get (Host & "A: b" & ASCII.HT & "c" & CRLF),
          Redirect),
       R ("rule 5: obs-text in a value is accepted",
          Get (Host & "A: " & Character'Val (16#E9#) & CRLF), Redirect),
       R ("rule 6: 100 field lines are served", Get (Host & Many_Fields (99)), Redirect),
       R ("rule 6: 101 field lines is 431", Get (Host & Many_Fields (100)), E431),
       R ("rule 6: a field section over 16384 octets is 431",
          Get (Host & "A: " & (1 .. 16400 => 'b') & CRLF), E431),
       R ("rule 6: a long field section is 431 before its end",
          "GET / HTTP/1.1" & CRLF & "A: " & (1 .. 16400 => 'b'), E431),
       R ("rule 7: no Host on HTTP/1.1 is 400", Get (""), E400),
       R ("rule 7: two Host lines is 400", Get (Host & Host), E400),
       R ("rule 7: two Host lines on HTTP/1.0 is 400", Get (Host & Host, "HTTP/1.0"), E400),
       R ("rule 7: a Host with a space is 400", Get ("Host: a b" & CRLF), E400),
       R ("rule 7: a Host with a slash is 400", Get ("Host: a/b" & CRLF), E400),
       R ("rule 7: an empty Host is served", Get ("Host:" & CRLF), Redirect),
       R ("rule 7: host and port are served", Get ("host: Example.org:8080" & CRLF), Redirect),
       R ("rule 7: an IP-literal is served", Get ("Host: [::1]:80" & CRLF), Redirect),
       R ("rule 7: an empty IP-literal is 400", Get ("Host: []" & CRLF), E400),
       R ("rule 7: a letter in the port is 400", Get ("Host: h:8a" & CRLF), E400),
       R ("rule 8: Content-Length with a sign is 400", Get (Host & "Content-Length: +1" & CRLF),
          E400),
       R ("rule 8: an empty Content-Length is 400", Get (Host & "Content-Length:" & CRLF), E400),
       R ("rule 8: a Content-Length list is 400", Get (Host & "Content-Length: 5, 5" & CRLF),
          E400),
       R ("rule 8: 19 digits of Content-Length is 400",
          Get (Host & "Content-Length: 1234567890123456789" & CRLF), E400),
       R ("rule 8: 18 digits of Content-Length is served",
          Get (Host & "Content-Length: 123456789012345678" & CRLF), Redirect),
       R ("rule 8: two Content-Length lines is 400",
          Get (Host & "Content-Length: 0" & CRLF & "Content-Length: 0" & CRLF), E400),
       R ("rule 8: Transfer-Encoding and Content-Length is 400",
          Get (Host & "Content-Length: 0" & CRLF & "Transfer-Encoding: chunked" & CRLF), E400),
       R ("rule 8: Transfer-Encoding on HTTP/1.0 is 400",
          Get ("Transfer-Encoding: chunked" & CRLF, "HTTP/1.0"), E400),
       R ("rule 8: two Transfer-Encoding lines is 400",
          Get (Host & "Transfer-Encoding: chunked" & CRLF & "Transfer-Encoding: chunked" & CRLF),
          E400),
       R ("rule 8: gzip then chunked is 501", Get (Host & "Transfer-Encoding: gzip, chunked"
          & CRLF), E501),
       R ("rule 8: chunked not last is 400", Get (Host & "Transfer-Encoding: chunked, gzip"
          & CRLF), E400),
       R ("rule 8: an empty coding is 400", Get (Host & "Transfer-Encoding: , chunked" & CRLF),
          E400),
       R ("rule 8: chunked alone is answered", Get (Host & "Transfer-Encoding: CHUNKED" & CRLF),
          Redirect),
       R ("an incomplete head needs more", "GET / HTTP/1.1" & CRLF & Host, Need_More),
       R ("empty lines alone need more", CRLF & CRLF, Need_More)));

end Parse_Rows;
