/* One cmocka group holds every unit test, so the run ends with one summary line. */
#include "cases.h"

int main(void)
{
    static struct CMUnitTest tests[MAX_TESTS];
    size_t n = 0;
    n = request_tests(tests, n);
    n = seed_tests(tests, n);
    n = response_tests(tests, n);
    n = config_tests(tests, n);
    n = listener_tests(tests, n);
    n = server_tests(tests, n);
    return _cmocka_run_group_tests("renard-c", tests, n, NULL, NULL);
}
