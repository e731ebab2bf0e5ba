"""The connection-tracking table (conntrack.py): its fill and drops as the kernel writes them,
and the wait before a sample, over files laid out like /proc's."""

from arena.host import conntrack

# /proc/net/stat/nf_conntrack of a two-CPU machine, as read here after the table was full
STAT = "\n".join(
    [
        "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop "
        "icmp_error  expect_new expect_create expect_delete search_restart",
        "0003251e  00000000 00000000 00000000 00000008 00000000 00000000 00000000 00000000 00000000 0000011f "
        "00000000 00000000  00000000 00000000 00000000 00000000",
        "0003251e  00000000 00000000 00000000 00000002 00000000 00000000 00000000 00000000 00000000 0000086d "
        "00000002 00000000  00000000 00000000 00000000 00000000",
    ]
)


def table(tmp_path, monkeypatch, count: int, limit: int = 1000):
    proc = tmp_path / "netfilter"
    proc.mkdir(exist_ok=True)
    (proc / "nf_conntrack_count").write_text(f"{count}\n")
    (proc / "nf_conntrack_max").write_text(f"{limit}\n")
    (proc / "nf_conntrack_tcp_timeout_time_wait").write_text("120\n")
    monkeypatch.setattr(conntrack, "PROC", proc)
    return proc


def test_drops_sum_the_hexadecimal_drop_column_over_cpus(tmp_path, monkeypatch):
    (tmp_path / "stat").write_text(STAT)
    monkeypatch.setattr(conntrack, "STAT", tmp_path / "stat")
    assert conntrack.drops() == 0x11F + 0x86D


def test_without_connection_tracking_nothing_is_read_and_nothing_waits(tmp_path, monkeypatch):
    monkeypatch.setattr(conntrack, "PROC", tmp_path / "absent")
    monkeypatch.setattr(conntrack, "STAT", tmp_path / "absent")
    said = []
    assert conntrack.usage() is None and conntrack.drops() is None
    assert conntrack.wait_for_room(said.append, 10**9, sleep=lambda s: 1 / 0) == 0.0 and said == []


def test_a_close_sample_needs_room_for_each_second_of_its_load_and_a_keep_alive_one_little():
    assert conntrack.needed(True, 11) == 11 * conntrack.CONNECTS_PER_S  # a JVM peer: 10 s warm-up + 1 s
    assert conntrack.needed(False, 11) == conntrack.FEW


def test_a_table_with_room_for_the_sample_does_not_wait(tmp_path, monkeypatch):
    table(tmp_path, monkeypatch, count=900)
    said = []
    assert conntrack.wait_for_room(said.append, 50, sleep=lambda s: 1 / 0) == 0.0 and said == []


def test_a_table_without_room_waits_until_its_entries_expire_and_says_so(tmp_path, monkeypatch):
    proc = table(tmp_path, monkeypatch, count=990)
    said, slept = [], []

    def expire(seconds):  # each second the kernel drops 100 entries
        slept.append(seconds)
        count = int((proc / "nf_conntrack_count").read_text())
        (proc / "nf_conntrack_count").write_text(str(count - 100))

    conntrack.wait_for_room(said.append, 300, sleep=expire)
    assert len(slept) == 4  # 990 -> 590: 590 + 300 within 95 % of 1 000
    assert said == [
        "the kernel's connection-tracking table holds 990 of 1,000 entries "
        "(closed connections are kept 120 s): waiting for room for the next sample's 300"
    ]


def test_a_wait_ends_after_the_time_a_closed_connection_is_held(tmp_path, monkeypatch):
    proc = table(tmp_path, monkeypatch, count=990)
    (proc / "nf_conntrack_tcp_timeout_time_wait").write_text("2\n")
    clock = iter(range(0, 1000))
    monkeypatch.setattr(conntrack.time, "monotonic", lambda: next(clock))
    slept = []
    conntrack.wait_for_room(lambda line: None, 300, sleep=slept.append)
    assert len(slept) == 6  # within 2 s held + 5 s (the clock ticks 1 s a reading), the table never drains


def test_a_sample_that_would_need_more_than_half_the_table_waits_for_half(tmp_path, monkeypatch):
    table(tmp_path, monkeypatch, count=440)
    assert conntrack.wait_for_room(lambda line: None, 240_000, sleep=lambda s: 1 / 0) == 0.0  # 440 + 500 <= 950
    table(tmp_path, monkeypatch, count=460)
    assert not conntrack.has_room(conntrack.usage(), 240_000)
