/* libFuzzer target for the request parser (SPEC §5): any input gives one of the three
 * outcomes, the same whether it comes in one read or two, without reading out of bounds (ASan) or undefined behaviour (UBSan); a complete
 * head lies within the input, and its response fits the bound the server sizes for. */
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "response.h"
#include "seed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct redirects redirects;
    static struct date_line date;
    static char *out;
    if (!out) {
        if (redirects_init(&redirects, "https://avatar.example.org/Renard-{n}.png", 21) != 0) abort();
        date_update(&date, 0);
        out = malloc(redirects_max_response(&redirects));
    }
    struct parse p = parse_request(data, size);
    switch (p.outcome) {
    case PARSE_COMPLETE: {
        if (p.request.head_len == 0 || p.request.head_len > size) abort();
        uint32_t k = p.request.seeded ? k_for_hash(p.request.seed_hash, 21) : 1;
        size_t n = response_write(out, STATUS_REDIRECT, k, p.request.seeded, REJECT_BAD_REQUEST, false, CLOSE,
                                  &redirects, &date);
        if (n > redirects_max_response(&redirects)) abort();
        break;
    }
    case PARSE_PARTIAL:
        if (p.empty_lines > size) abort();
        break;
    case PARSE_ERROR:
        if (p.reject == REJECT_TIMEOUT) abort(); /* only the connection decides a 408 */
        break;
    }
    /* The same answer when the input arrives in two reads, split where its first octet says. */
    if (size > 1) {
        size_t split = data[0] % size;
        struct progress progress = {0};
        struct parse first = parse_more(data, split, &progress);
        if (first.outcome == PARSE_PARTIAL) {
            struct parse resumed = parse_more(data + first.empty_lines, size - first.empty_lines, &progress);
            if (resumed.outcome != p.outcome) abort();
            if (p.outcome == PARSE_ERROR && resumed.reject != p.reject) abort();
            if (p.outcome == PARSE_COMPLETE && resumed.request.head_len + first.empty_lines != p.request.head_len)
                abort();
        }
    }
    uint64_t hash;
    seed_hash(data, size, &hash);
    return 0;
}
