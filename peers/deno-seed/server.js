// The seed's Deno program on today's Deno.serve: 404 "nope" off the root path, else a 302
// to a random avatar, both as `new Response` objects (README: what differs from the seed).
// Usage: deno run --allow-net server.js HOST PORT COUNT LOCATION   (LOCATION contains {n})
const [hostname, port, count, location] = Deno.args;
const images = Number(count);

Deno.serve({ hostname, port: Number(port), onListen() {} }, (request) => {
  const url = new URL(request.url);

  if (url.pathname !== "/") return new Response("nope", { status: 404 });

  const n = Math.floor(Math.random() * images) + 1; // uniform in 1..images
  return new Response(null, {
    status: 302,
    headers: { location: location.replaceAll("{n}", String(n)) },
  });
});
