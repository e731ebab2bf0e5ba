// The anchor of the README's comparison: node:http answering every request with a fixed
// 302, nothing else (no parsing rules, no seed). What js-node would cost on node:http at
// best. Usage: node bench/node-http-anchor.js PORT
import http from "node:http";

const server = http.createServer((request, response) => {
  response.writeHead(302, { Location: "https://avatar.example.org/Renard-7.png", "Cache-Control": "no-store" });
  response.end();
});
server.listen(Number(process.argv[2]), "127.0.0.1", () => process.stderr.write(`listening on http://127.0.0.1:${process.argv[2]}\n`));
process.on("SIGTERM", () => process.exit(0));
