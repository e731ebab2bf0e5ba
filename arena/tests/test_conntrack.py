"""The connection-tracking table (conntrack.py): its fill and drops as the kernel writes them,
and the wait before a sample (issue 31), over files laid out like /proc's."""

from arena import conntrack

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
    assert conntrack.wait_for_room(said.append, sleep=lambda s: 1 / 0) == 0.0 and said == []


def test_a_table_with_room_does_not_wait(tmp_path, monkeypatch):
    table(tmp_path, monkeypatch, count=600)
    said = []
    assert conntrack.wait_for_room(said.append, sleep=lambda s: 1 / 0) == 0.0 and said == []


def test_a_full_table_waits_until_its_entries_expire_and_says_so(tmp_path, monkeypatch):
    proc = table(tmp_path, monkeypatch, count=990)
    said, slept = [], []

    def expire(seconds):  # each second the kernel drops 100 entries
        slept.append(seconds)
        count = int((proc / "nf_conntrack_count").read_text())
        (proc / "nf_conntrack_count").write_text(str(count - 100))

    conntrack.wait_for_room(said.append, sleep=expire)
    assert len(slept) == 4  # 990 -> 590, at most 60 % of 1 000
    assert said == [
        "the kernel's connection-tracking table holds 990 of 1,000 entries "
        "(closed connections are kept 120 s): waiting for room before the next sample"
    ]


def test_a_sample_that_opens_few_connections_waits_only_for_a_nearly_full_table(tmp_path, monkeypatch):
    table(tmp_path, monkeypatch, count=900)
    said = []
    assert conntrack.wait_for_room(said.append, conntrack.ROOM_FEW, sleep=lambda s: 1 / 0) == 0.0 and said == []
