package renard;

/**
 * What {@link Parser#parse} found in a request head (SPEC §2, §5, §6, §7.1). One instance per
 * event loop, overwritten by every parse: the hot path allocates nothing.
 */
final class Request {
    /** Route of a well-formed request (SPEC §2). */
    static final int REDIRECT = 1, HEALTH = 2, NOT_FOUND = 3, METHOD_NOT_ALLOWED = 4;

    /** Octets the head occupies in the input, leading empty lines included (COMPLETE). */
    int headLen;
    /** Leading empty lines the caller may drop, in octets (PARTIAL). */
    int emptyLines;
    /** The refusal's status: 400, 414, 431, 501 or 505 (ERROR). */
    int reject;

    /** One of REDIRECT, HEALTH, NOT_FOUND, METHOD_NOT_ALLOWED. */
    int route;
    /** REDIRECT with a {@code seed} parameter: {@link #seedHash} is FNV-1a-64 of it. */
    boolean seeded;
    long seedHash;
    /** HEAD: the answer carries no body. */
    boolean headMethod;
    /** HTTP/1.0 (else HTTP/1.1). */
    boolean http10;
    /** The connection persists after the answer by the request's own terms (SPEC §7.1). */
    boolean keepAlive;
    /** Body octets that follow the head, to be discarded (SPEC §6). */
    long contentLength;
    /** {@code Transfer-Encoding: chunked}: answer, then close (SPEC §6). */
    boolean chunked;
    /** HTTP/1.1 {@code Expect: 100-continue} with a body: answer at once, then close (SPEC §6). */
    boolean expectContinue;
}
