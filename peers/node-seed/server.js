// The seed's Node program: node:http's createServer, one handler that answers every request
// with a 302 to a random avatar through res.writeHead and res.end (README: what differs).
// Usage: node server.js HOST PORT COUNT LOCATION   (LOCATION contains {n}; k is 1..COUNT)
const http = require("node:http");

const [host, port, count, location] = process.argv.slice(2);
const images = Number(count);

const server = http.createServer((req, res) => {
  const n = Math.floor(Math.random() * images) + 1; // uniform in 1..images
  res.writeHead(302, { location: location.replaceAll("{n}", String(n)) });
  res.end();
});

server.listen(Number(port), host);
