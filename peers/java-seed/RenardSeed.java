// The seed: the JDK's built-in HTTP server answering every request with a 302 to a random
// avatar, as first published (default executor, java.util.Random, no framework).
// Usage: java -Xmx8m -Xss256k RenardSeed HOST PORT COUNT LOCATION   (LOCATION contains {n})
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.util.Random;

public class RenardSeed {
    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        int count = Integer.parseInt(args[2]);
        String location = args[3];
        Random random = new Random();

        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
        server.createContext("/", exchange -> {
            String n = Integer.toString(random.nextInt(count) + 1);
            exchange.getResponseHeaders().set("Location", location.replace("{n}", n));
            exchange.sendResponseHeaders(302, -1);
            exchange.close();
        });
        server.start();
    }
}
