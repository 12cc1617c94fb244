package metamorph

import (
	"strings"
	"testing"
)

// Lines as the dumps hold them, one per format the transformations read.
const (
	zapLine      = `{"level":"warn","ts":"2026-11-30T13:58:24.366Z","logger":"forwarder","msg":"upstream dial failed, will retry","endpoint":"telemetry-intake.internal:9443","attempt":1,"error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`
	pinoLine     = `{"level":50,"time":1795948358989,"msg":"request failed","url":"/cart","statusCode":500}`
	logfmtSample = `time=2026-11-25T09:43:35.680Z level=ERROR msg="archive exporter: missing credential" missing=ARCHIVE_S3_SECRET_ACCESS_KEY`
	nginxLine    = `2026/11/24 10:20:40 [error] 34#34: *1 open() "/usr/share/nginx/html/healthz" failed (2: No such file or directory)`
	springLine   = `2026-11-24T15:45:13.831Z  WARN 1 --- [payments-api] c.e.payments.risk.RiskClient : Risk score timeout after 250ms`
	celeryLine   = `[2026-11-24 06:24:00,737: ERROR/ForkPoolWorker-1] Task reports.refresh_rollup[f67f800f] raised unexpected: TimeoutError()`
	fluentLine   = `[2026/11/28 13:21:52] [ warn] [output:forward:forward.0] retrying in 5s`
	usageLine    = `flag provided but not defined: -listen-adress`
	kubectlLog   = `Request log error: container "api" in pod "x" is waiting to start: ContainerCreating`
)

func TestRelevelKeepsTheWords(t *testing.T) {
	for _, tt := range []struct {
		line, error, warn, none string
	}{
		{
			zapLine,
			`{"level":"error","ts":"2026-11-30T13:58:24.366Z","logger":"forwarder","msg":"upstream dial failed, will retry","endpoint":"telemetry-intake.internal:9443","attempt":1,"error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`,
			zapLine,
			`{"ts":"2026-11-30T13:58:24.366Z","logger":"forwarder","msg":"upstream dial failed, will retry","endpoint":"telemetry-intake.internal:9443","attempt":1,"error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`,
		},
		{
			pinoLine, pinoLine,
			`{"level":40,"time":1795948358989,"msg":"request failed","url":"/cart","statusCode":500}`,
			`{"time":1795948358989,"msg":"request failed","url":"/cart","statusCode":500}`,
		},
		{
			logfmtSample, logfmtSample,
			`time=2026-11-25T09:43:35.680Z level=WARN msg="archive exporter: missing credential" missing=ARCHIVE_S3_SECRET_ACCESS_KEY`,
			`time=2026-11-25T09:43:35.680Z msg="archive exporter: missing credential" missing=ARCHIVE_S3_SECRET_ACCESS_KEY`,
		},
		{
			nginxLine, nginxLine,
			`2026/11/24 10:20:40 [warn] 34#34: *1 open() "/usr/share/nginx/html/healthz" failed (2: No such file or directory)`,
			`2026/11/24 10:20:40 34#34: *1 open() "/usr/share/nginx/html/healthz" failed (2: No such file or directory)`,
		},
		{
			springLine,
			`2026-11-24T15:45:13.831Z  ERROR 1 --- [payments-api] c.e.payments.risk.RiskClient : Risk score timeout after 250ms`,
			springLine,
			`2026-11-24T15:45:13.831Z  1 --- [payments-api] c.e.payments.risk.RiskClient : Risk score timeout after 250ms`,
		},
		{
			celeryLine, celeryLine,
			`[2026-11-24 06:24:00,737: WARN/ForkPoolWorker-1] Task reports.refresh_rollup[f67f800f] raised unexpected: TimeoutError()`,
			`[2026-11-24 06:24:00,737: ForkPoolWorker-1] Task reports.refresh_rollup[f67f800f] raised unexpected: TimeoutError()`,
		},
		{
			fluentLine, `[2026/11/28 13:21:52] [ error] [output:forward:forward.0] retrying in 5s`, fluentLine,
			`[2026/11/28 13:21:52] [output:forward:forward.0] retrying in 5s`,
		},
	} {
		r := parseLine(tt.line)
		for _, want := range []struct{ level, line string }{{"error", tt.error}, {"warn", tt.warn}, {"", tt.none}} {
			if got := r.withLevel(want.level).render(); got != want.line {
				t.Errorf("level %q of\n  %s\n= %s\nwant %s", want.level, tt.line, got, want.line)
			}
		}
	}
	for _, line := range []string{usageLine, kubectlLog} {
		if r := parseLine(line); r.format != unstructured {
			t.Errorf("%q read as format %d, want unstructured: it has no level to change", line, r.format)
		}
	}
}

func TestReencodeKeepsTheFields(t *testing.T) {
	for _, tt := range []struct {
		line                string
		json, logfmt, plain string
	}{
		{
			zapLine,
			`{"ts":"2026-11-30T13:58:24.366Z","level":"warn","msg":"upstream dial failed, will retry","logger":"forwarder","endpoint":"telemetry-intake.internal:9443","attempt":1,"error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`,
			`ts=2026-11-30T13:58:24.366Z level=warn msg="upstream dial failed, will retry" logger=forwarder endpoint=telemetry-intake.internal:9443 attempt=1 error="dial tcp 10.96.14.7:9443: connect: connection refused"`,
			`2026-11-30T13:58:24.366Z WARN upstream dial failed, will retry logger=forwarder endpoint=telemetry-intake.internal:9443 attempt=1 error="dial tcp 10.96.14.7:9443: connect: connection refused"`,
		},
		{
			pinoLine,
			`{"time":"2026-11-29T10:32:38.989Z","level":"error","msg":"request failed","url":"/cart","statusCode":500}`,
			`time=2026-11-29T10:32:38.989Z level=error msg="request failed" url=/cart statusCode=500`,
			`2026-11-29T10:32:38.989Z ERROR request failed url=/cart statusCode=500`,
		},
		{
			logfmtSample,
			`{"time":"2026-11-25T09:43:35.680Z","level":"error","msg":"archive exporter: missing credential","missing":"ARCHIVE_S3_SECRET_ACCESS_KEY"}`,
			`time=2026-11-25T09:43:35.680Z level=error msg="archive exporter: missing credential" missing=ARCHIVE_S3_SECRET_ACCESS_KEY`,
			`2026-11-25T09:43:35.680Z ERROR archive exporter: missing credential missing=ARCHIVE_S3_SECRET_ACCESS_KEY`,
		},
		{
			celeryLine,
			`{"ts":"2026-11-24T06:24:00.737Z","level":"error","msg":"Task reports.refresh_rollup[f67f800f] raised unexpected: TimeoutError()","process":"ForkPoolWorker-1"}`,
			`ts=2026-11-24T06:24:00.737Z level=error msg="Task reports.refresh_rollup[f67f800f] raised unexpected: TimeoutError()" process=ForkPoolWorker-1`,
			`2026-11-24T06:24:00.737Z ERROR Task reports.refresh_rollup[f67f800f] raised unexpected: TimeoutError() process=ForkPoolWorker-1`,
		},
	} {
		e, ok := parseLine(tt.line).entry()
		if !ok {
			t.Fatalf("%s: not read as an entry", tt.line)
		}
		for _, want := range []struct {
			f    lineFormat
			line string
		}{{jsonLine, tt.json}, {logfmtLine, tt.logfmt}, {plainLine, tt.plain}} {
			got := e.encode(want.f)
			if got != want.line {
				t.Errorf("%s as %d:\n got %s\nwant %s", tt.line, want.f, got, want.line)
			}
			// Every encoding reads back with the same time, level and message (a plain line's
			// fields read back as part of its message).
			back, ok := parseLine(got).entry()
			if !ok || !back.at.Equal(e.at) || back.level != e.level || !strings.HasPrefix(back.msg, e.msg) {
				t.Errorf("%s does not read back with the time, level and message it was written from", got)
			}
		}
	}
	for _, line := range []string{usageLine, kubectlLog, `10.244.42.1 - - [25/Nov/2026:09:17:10 +0000] "GET /index.html HTTP/1.1" 200 1843`} {
		if _, ok := parseLine(line).entry(); ok {
			t.Errorf("%q is re-encoded; an unstructured line stays as the program wrote it", line)
		}
	}
}

func TestRewordKeepsKeysAndTimes(t *testing.T) {
	for _, tt := range []struct {
		line    string
		variant int
		want    string
	}{
		{zapLine, 0, `{"level":"warn","ts":"2026-11-30T13:58:24.366Z","logger":"forwarder","msg":"upstream dial did not succeed, will retry","endpoint":"telemetry-intake.internal:9443","attempt":1,"error":"dial tcp 10.96.14.7:9443: connect: ECONNREFUSED"}`},
		{zapLine, 1, `{"level":"warn","ts":"2026-11-30T13:58:24.366Z","logger":"forwarder","msg":"upstream dial unsuccessful, will retry","endpoint":"telemetry-intake.internal:9443","attempt":1,"error":"dial tcp 10.96.14.7:9443: connect: connection rejected"}`},
		{
			`{"time":"2026-11-24T11:46:13.045Z","level":"WARN","msg":"recommendations unavailable","error":"context deadline exceeded","timeout":"150ms"}`, 1,
			`{"time":"2026-11-24T11:46:13.045Z","level":"WARN","msg":"recommendations not reachable","error":"took too long","timeout":"150ms"}`,
		},
		{nginxLine, 0, `2026/11/24 10:20:40 [error] 34#34: *1 open() "/usr/share/nginx/html/healthz" did not succeed (2: ENOENT)`},
		{usageLine, 1, `unknown flag: -listen-adress`},
		{celeryLine, 0, celeryLine}, // TimeoutError is a name, not the word timeout
	} {
		r := parseLine(tt.line)
		var got string
		switch r.format {
		case jsonLine, logfmtLine:
			ps := append([]pair(nil), r.pairs...)
			for i := range ps {
				if i != findKey(ps, timeKeys) && i != findKey(ps, levelKeys) && !ps[i].raw {
					ps[i].value = reword(ps[i].value, tt.variant)
				}
			}
			r.pairs = ps
			got = r.render()
		case plainLine:
			r.post = reword(r.post, tt.variant)
			got = r.render()
		default:
			got = reword(tt.line, tt.variant)
		}
		if got != tt.want {
			t.Errorf("variant %d of\n  %s\n= %s\nwant %s", tt.variant, tt.line, got, tt.want)
		}
	}
}
