package org.renard.spring;

import java.util.concurrent.ThreadLocalRandom;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** GET / answers 302 to one of renard.count locations, rendered once at start. */
@SpringBootApplication
@RestController
public class RenardApplication {

    private final String[] locations;

    public RenardApplication(@Value("${renard.count}") int count, @Value("${renard.location}") String location) {
        locations = new String[count];
        for (int k = 1; k <= count; k++) {
            locations[k - 1] = location.replace("{n}", Integer.toString(k));
        }
    }

    @GetMapping("/")
    public ResponseEntity<Void> redirect() {
        String location = locations[ThreadLocalRandom.current().nextInt(locations.length)];
        return ResponseEntity.status(HttpStatus.FOUND)
                .header(HttpHeaders.LOCATION, location)
                .header(HttpHeaders.CACHE_CONTROL, "no-store")
                .build();
    }

    public static void main(String[] args) {
        SpringApplication.run(RenardApplication.class, args);
    }
}
