// Bun.serve as its documentation shows it: a route for "/" that returns Response.redirect,
// `fetch` for every other path. `?seed=NAME` picks the same image every time (FNV-1a-64).
// Usage: bun server.js HOST PORT COUNT LOCATION   (LOCATION contains {n})
const [hostname, port, count, location] = Bun.argv.slice(2);
const images = BigInt(count);

// k = FNV-1a-64 over the seed's UTF-8 octets, mod images, plus 1
function seeded(seed) {
  let h = 0xcbf29ce484222325n;
  for (const octet of new TextEncoder().encode(seed)) {
    h = ((h ^ BigInt(octet)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return (h % images) + 1n;
}

function pick(seed) {
  const k = seed === null ? Math.floor(Math.random() * Number(images)) + 1 : seeded(seed);
  return location.replaceAll("{n}", String(k));
}

Bun.serve({
  hostname,
  port: Number(port),
  routes: {
    "/": (req) => Response.redirect(pick(new URL(req.url).searchParams.get("seed")), 302),
  },
  fetch() {
    return new Response("Not Found", { status: 404 });
  },
});
