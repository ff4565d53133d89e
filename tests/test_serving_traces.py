"""The shipped Azure LLM inference traces 2023: read as published, checked against the CSV text by other routes."""

import csv
import hashlib
import re
import statistics
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import Request, azure_trace_path, load_azure_trace, simulate
from infer_lib.serving.workloads.azure_trace import AZURE_TRACE_DIR

SERVICES = ("code", "conversation")


def csv_rows(service: str) -> list[dict[str, str]]:
    """The data rows of a shipped trace, read with the csv module alone."""
    with open(azure_trace_path(service), newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def seconds_since_first(timestamps: list[str]) -> list[Decimal]:
    """Arrivals by another route: datetime for the whole microseconds, the 7th digit added as a Decimal."""
    def parse(text: str) -> Decimal:
        whole, fraction = text.split(".")
        moment = datetime.fromisoformat(f"{whole}.{fraction[:6]}")
        since = moment - datetime(2023, 1, 1)
        return (Decimal(since.days * 86_400 + since.seconds) + Decimal(moment.microsecond) / Decimal(10**6)
                + Decimal(fraction[6:] or 0) / Decimal(10**7))

    first = parse(timestamps[0])
    return [parse(text) - first for text in timestamps]


@pytest.fixture(scope="module")
def traces() -> dict[str, list[Request]]:
    return {service: load_azure_trace(azure_trace_path(service)) for service in SERVICES}


# --- the shipped files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("service, num_rows", [("code", 8819), ("conversation", 19366)])
def test_row_counts_are_the_lines_of_the_file_minus_the_header(traces, service, num_rows):
    raw = azure_trace_path(service).read_bytes()
    # The published files end without a newline, so `wc -l` (which counts b"\n") prints num_rows, not
    # num_rows + 1: the header's newline is counted and the last row's is missing.
    assert raw.count(b"\n") == num_rows
    assert len(raw.splitlines()) - 1 == num_rows == len(traces[service])


def test_shipped_files_are_the_published_bytes_and_carry_their_licence():
    readme = (AZURE_TRACE_DIR / "README.md").read_text(encoding="utf-8")
    for service, name in (("code", "code"), ("conversation", "conversation")):
        digest = hashlib.sha256(azure_trace_path(service).read_bytes()).hexdigest()
        assert re.search(rf"{name} `{digest}`", readme), f"{service}: the file differs from the README's SHA-256"
    for needed in ("CC BY 4.0", "Microsoft Azure", "Splitwise", "ISCA", "https://github.com/Azure/AzurePublicDataset"):
        assert needed in readme


# --- arrivals ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("service", SERVICES)
def test_first_arrival_is_zero_and_arrivals_never_go_back(traces, service):
    arrivals = [request.arrived_at_s for request in traces[service]]
    assert arrivals[0] == 0.0
    assert all(later >= earlier for earlier, later in zip(arrivals, arrivals[1:]))
    # One hour of traffic each (code 57 min 16 s, conversation 58 min 22 s).
    assert 3400 < arrivals[-1] < 3600


@pytest.mark.parametrize("service", SERVICES)
def test_every_arrival_matches_the_timestamps_to_100_ns(traces, service):
    rows = csv_rows(service)
    expected = seconds_since_first([row["TIMESTAMP"] for row in rows])
    for request, seconds in zip(traces[service], expected):
        assert request.arrived_at_s == pytest.approx(float(seconds), abs=1e-9)


def test_first_rows_by_hand():
    # Line 2 of each file, written out here from the CSV text.
    code_line_2 = "2023-11-16 18:17:03.9799600,4808,10"
    code_line_3 = "2023-11-16 18:17:04.0319600,3180,8"
    conv_line_2 = "2023-11-16 18:15:46.6805900,374,44"
    conv_line_3 = "2023-11-16 18:15:50.9951690,396,109"
    code_text = azure_trace_path("code").read_text(encoding="utf-8").splitlines()
    conv_text = azure_trace_path("conversation").read_text(encoding="utf-8").splitlines()
    assert code_text[1:3] == [code_line_2, code_line_3] and conv_text[1:3] == [conv_line_2, conv_line_3]

    code = load_azure_trace(azure_trace_path("code"))
    conv = load_azure_trace(azure_trace_path("conversation"))
    assert (code[0].request_id, code[0].arrived_at_s, code[0].num_prefill_tokens, code[0].num_decode_tokens) \
        == (0, 0.0, 4808, 10)
    # 04.0319600 - 03.9799600 = 0.0520000 s
    assert (code[1].request_id, code[1].num_prefill_tokens, code[1].num_decode_tokens) == (1, 3180, 8)
    assert code[1].arrived_at_s == pytest.approx(0.052, abs=1e-12)
    # 50.9951690 - 46.6805900 = 4.3145790 s.
    assert (conv[1].num_prefill_tokens, conv[1].num_decode_tokens) == (396, 109)
    assert conv[1].arrived_at_s == pytest.approx(4.314579, abs=1e-12)
    # The last row of the code trace: 19:14:19.9280160 - 18:17:03.9799600 = 3435.9480560 s.
    assert code_text[-1] == "2023-11-16 19:14:19.9280160,549,173"
    assert (code[-1].request_id, code[-1].num_prefill_tokens, code[-1].num_decode_tokens) == (8818, 549, 173)
    assert code[-1].arrived_at_s == pytest.approx(3435.948056, abs=1e-9)


@pytest.mark.parametrize("service", SERVICES)
def test_timestamps_have_seven_fractional_digits_the_last_always_zero(service):
    # Written at 100 ns resolution, recorded at 1 us in fact: sub-microsecond precision (kept by the loader,
    # see test_sub_second_precision_and_a_day_boundary) changes nothing on the published files.
    fractions = {row["TIMESTAMP"].split(".")[1] for row in csv_rows(service)}
    assert {len(fraction) for fraction in fractions} == {7}
    assert {fraction[6] for fraction in fractions} == {"0"}


# --- what the chapters show ----------------------------------------------------------------------------------


def test_code_has_longer_prompts_and_shorter_answers_than_conversation(traces):
    medians = {}
    for service in SERVICES:
        rows = csv_rows(service)
        medians[service] = (statistics.median(int(row["ContextTokens"]) for row in rows),
                            statistics.median(int(row["GeneratedTokens"]) for row in rows))
        loaded = traces[service]
        assert statistics.median(r.num_prefill_tokens for r in loaded) == medians[service][0]
        assert statistics.median(r.num_decode_tokens for r in loaded) == medians[service][1]
    (code_prompt, code_output), (conv_prompt, conv_output) = medians["code"], medians["conversation"]
    assert code_prompt > conv_prompt and code_output < conv_output
    # Opposite prefill:decode ratios: tokens in per token out, at the median request.
    assert code_prompt / code_output > 10 * (conv_prompt / conv_output)


def test_loaded_requests_run_in_the_simulator(traces):
    requests = traces["code"][:40]
    result = simulate(requests, get_model("Llama 3.1 8B"), get_chip("H100 SXM"))
    assert len(result.records) == 40
    assert all(record.ttft_s > 0 for record in result.records)


# --- errors --------------------------------------------------------------------------------------------------

HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"


def write(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    path = tmp_path / "trace.csv"
    path.write_bytes((header + body).encode("utf-8"))
    return path


def test_sub_second_precision_and_a_day_boundary(tmp_path):
    path = write(tmp_path, "2023-11-16 23:59:59.9999999,5,1\r\n"
                           "2023-11-17 00:00:00.0000000,6,2\r\n"
                           "2023-11-17 00:00:01,7,3\r\n"
                           "2023-11-17 00:00:01.5,8,4")
    requests = load_azure_trace(path)
    assert [r.arrived_at_s for r in requests] == pytest.approx([0.0, 1e-7, 1.0000001, 1.5000001], abs=1e-12)
    assert [r.request_id for r in requests] == [0, 1, 2, 3]


@pytest.mark.parametrize("body, message", [
    ("2023-11-16 18:15:46.6805900,374\r\n", r"line 2: 2 fields, expected 3"),
    ("2023-11-16 18:15:46.6805900,374,44,1\r\n", r"line 2: 4 fields, expected 3"),
    ("2023-11-16 18:15:46.68,374,44\r\n18:15:47.1,10,10\r\n", r"line 3, field TIMESTAMP: '18:15:47.1' is not a time"),
    ("2023-11-31 18:15:46.68,374,44\r\n", r"line 2, field TIMESTAMP: '2023-11-31 18:15:46.68' is not a valid time"),
    ("2023-11-16 18:15:46.6805900,3.5e2,44\r\n", r"line 2, field ContextTokens: '3.5e2' is not a whole number"),
    ("2023-11-16 18:15:46.6805900,374,-4\r\n", r"line 2, field GeneratedTokens: '-4' is not a whole number"),
    ("2023-11-16 18:15:46.6805900,374,\r\n", r"line 2, field GeneratedTokens: '' is not a whole number"),
    ("2023-11-16 18:15:46.6805900,0,44\r\n", r"line 2, field ContextTokens: 0; a request needs at least one"),
    ("2023-11-16 18:15:46.6805900,374,44\r\n2023-11-16 18:15:46.6805899,5,5\r\n",
     r"line 3, field TIMESTAMP: '2023-11-16 18:15:46.6805899' is earlier than the row before"),
    ("2023-11-16 18:15:46.6805900,374,44\r\n\r\n2023-11-16 18:15:47,5,5\r\n", r"line 3: empty row"),
])
def test_malformed_rows_name_file_line_and_field(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ", " + message):
        load_azure_trace(path)


def test_zero_generated_tokens_is_an_error_unless_skipped(tmp_path):
    path = write(tmp_path, "2023-11-16 18:15:46,374,44\r\n2023-11-16 18:15:47,100,0\r\n2023-11-16 18:15:48,7,3")
    with pytest.raises(ValueError, match=r"line 3, field GeneratedTokens: 0; .* skip_zero_output=True"):
        load_azure_trace(path)
    kept = load_azure_trace(path, skip_zero_output=True)
    # The row on line 3 is left out; the others keep their row ids and their times from the first row.
    assert [(r.request_id, r.arrived_at_s, r.num_prefill_tokens) for r in kept] == [(0, 0.0, 374), (2, 2.0, 7)]


def test_bad_header_empty_file_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"line 1: the header must be TIMESTAMP,ContextTokens,GeneratedTokens"):
        load_azure_trace(write(tmp_path, "0,1,2\r\n", header="arrived_at_s,num_prefill_tokens,num_decode_tokens\r\n"))
    with pytest.raises(ValueError, match="header must be"):
        load_azure_trace(write(tmp_path, "", header=""))
    with pytest.raises(ValueError, match="has a header but no request rows"):
        load_azure_trace(write(tmp_path, ""))
    with pytest.raises(FileNotFoundError, match=r"no Azure trace file at .*nowhere\.csv; the shipped copies"):
        load_azure_trace(tmp_path / "nowhere.csv")


def test_unknown_service_lists_the_shipped_ones():
    with pytest.raises(ValueError, match="unknown Azure trace service 'conv'; allowed values: code, conversation"):
        azure_trace_path("conv")


def test_a_byte_order_mark_and_spaces_around_fields_are_read(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_bytes("\ufeffTIMESTAMP, ContextTokens, GeneratedTokens\n2023-11-16 18:15:46.5, 12, 3\n".encode())
    [request] = load_azure_trace(path)
    assert (request.arrived_at_s, request.num_prefill_tokens, request.num_decode_tokens) == (0.0, 12, 3)
