package facts

import (
	"regexp"
	"testing"
	"time"
)

func TestReadLineFailing(t *testing.T) {
	tests := []struct {
		name, line string
		failing    bool
		sev        Severity
	}{
		{"json warn retry", `{"level":"warn","ts":"2026-11-24T10:00:01Z","msg":"upstream dial failed, will retry"}`, true, SeverityWarning},
		{"json warn without a failure", `{"level":"warn","msg":"config key batch_size is deprecated"}`, false, 0},
		{"json error without failure words", `{"level":"error","msg":"buffer full, dropping events"}`, true, SeverityError},
		{"json info counts", `{"level":"info","msg":"traffic summary","status_5xx":0,"upstream_errors":0}`, false, 0},
		{"json info that reports a refusal", `{"level":"info","msg":"dial tcp 10.0.0.7:9443: connect: connection refused"}`, true, SeverityInfo},
		{"json debug", `{"level":"debug","msg":"retrying request after error"}`, false, 0},
		{"json field name", `{"msg":"stats","no_error_count":3}`, false, 0},
		{"logfmt info", `time=2026-11-24T19:48:50.429Z level=INFO msg="connected to queue"`, false, 0},
		{"logfmt error", `time=2026-11-24T19:48:50.429Z level=ERROR msg="decode failed"`, true, SeverityError},
		{"logfmt warn refused", `ts=2026-11-24T19:48:50Z level=warn msg="dial failed, retrying" err="dial tcp 10.0.0.7:9443: connect: connection refused"`, true, SeverityWarning},
		{"access 404", `10.244.3.1 - - [24/Nov/2026:10:20:40 +0000] "GET /healthz HTTP/1.1" 404 153 "-" "kube-probe/1.37" "-"`, true, SeverityWarning},
		{"access 200", `10.244.3.1 - - [24/Nov/2026:10:20:45 +0000] "GET /health HTTP/1.1" 200 2 "-" "kube-probe/1.37" "-"`, false, 0},
		{"access 503", `10.0.0.1 - - [24/Nov/2026:10:20:45 +0000] "POST /v1/ingest HTTP/1.1" 503 0 "-" "client" "-"`, true, SeverityError},
		{"nginx error", `2026/11/24 10:20:40 [error] 34#34: *1 open() "/usr/share/nginx/html/healthz" failed`, true, SeverityError},
		{"nginx notice", `2026/11/24 10:20:35 [notice] 1#1: start worker processes`, false, 0},
		{"klog error", `E1124 10:20:40.123456       1 main.go:42] cannot load config`, true, SeverityError},
		{"klog info", `I1124 10:20:40.123456       1 main.go:42] serving on :8080`, false, 0},
		{"klog warning that says nothing failed", `W1124 10:20:40.123456       1 main.go:42] flag --foo is deprecated`, false, 0},
		{"go flag", `flag provided but not defined: -listen-address`, true, SeverityWarning},
		{"kubectl's own words", `Request log error: container "worker" in pod "report-worker-774b5c5947-c8j8l" is waiting to start: CreateContainerConfigError`, false, 0},
		{"spring info", `2026-11-24 10:20:35.120  INFO 1 --- [main] o.s.b.w.embedded.tomcat.TomcatWebServer : Tomcat started on port(s): 8080`, false, 0},
		{"spring error", `2026-11-24 10:20:35.120 ERROR 1 --- [main] o.s.boot.SpringApplication : Application run failed`, true, SeverityError},
		{"log.Fatal", `2026/11/24 10:20:35 DATABASE_URL is not set`, true, SeverityWarning},
		{"python KeyError", `KeyError: 'DATABASE_URL'`, true, SeverityWarning},
		{"java exception", `java.lang.IllegalArgumentException: Could not resolve placeholder 'DB_HOST' in value "${DB_HOST}"`, true, SeverityWarning},
		{"sh -u", `/entrypoint.sh: line 4: UPSTREAM_URL: unbound variable`, true, SeverityWarning},
		{"panic", `panic: API_TOKEN must be set`, true, SeverityError},
		{"no level refusal", `could not connect to server: Connection refused`, true, SeverityWarning},
		{"read-only fs", `2026/11/24 10:20:35 open /var/lib/api/cache.db: read-only file system`, true, SeverityWarning},
		{"python warning", `WARNING:root:upstream unhealthy, retrying in 5s`, true, SeverityWarning},
		{"python traceback head", `Traceback (most recent call last):`, false, 0},
		{"python chained traceback", `During handling of the above exception, another exception occurred:`, false, 0},
		{"python traceback's exception", `redis.exceptions.ConnectionError: Error 111 connecting to sessions-redis.identity.svc:6380. Connection refused.`, true, SeverityWarning},
		{"python logger named error", `2026-11-30 09:38:23,368 INFO uvicorn.error: Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)`, false, 0},
		{"python default format, logger named error", `INFO:uvicorn.error:Started server process [1]`, false, 0},
		{"python logger named error, an error", `2026-11-30 09:38:23,368 ERROR uvicorn.error: Exception in ASGI application`, true, SeverityError},
		{"java logger with failure words", `2026-11-24 10:20:35 WARN com.zaxxer.hikari.pool.HikariPool: HikariPool-1 - Connection is not available, request timed out`, true, SeverityWarning},
		{"host and port after the level", `2026-11-24 10:20:35 WARN db.internal:5432 connection refused`, true, SeverityWarning},
		{"no errors", `2026-11-24T10:00:00Z sync complete, 0 errors, no failures`, false, 0},
		{"plain ok", `2026-11-24T10:00:00Z listening on :8080`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ReadLine(tt.line).Signal
			if s.Failing != tt.failing || s.Severity != tt.sev {
				t.Errorf("ReadLine(%q) = failing %v %q, want %v %q", tt.line, s.Failing, s.Severity, tt.failing, tt.sev)
			}
			if s.Failing && (s.Key == "" || s.Text == "") {
				t.Errorf("ReadLine(%q): a failure with key %q, text %q", tt.line, s.Key, s.Text)
			}
		})
	}
}

// One failure keeps its key whatever level, encoding and variable parts its copies log it with.
func TestKeyIsTheFailureNotItsWording(t *testing.T) {
	same := []string{
		`{"level":"warn","ts":"2026-11-24T10:00:01Z","msg":"dial failed, retrying","error":"dial tcp 10.0.0.7:9443: connect: connection refused"}`,
		`{"level":"error","ts":"2026-11-24T10:03:01.5Z","msg":"dial failed, retrying","error":"dial tcp 10.0.0.9:9443: connect: connection refused"}`,
		`{"msg":"dial failed, retrying","error":"dial tcp 10.0.0.7:9443: connect: connection refused"}`,
		`ts=2026-11-24T10:00:01Z level=warn msg="dial failed, retrying" error="dial tcp 10.0.0.7:9443: connect: connection refused"`,
		`2026-11-24T10:00:01Z WARN dial failed, retrying: dial tcp 10.0.0.7:9443: connect: connection refused`,
		`2026-11-24T10:00:01Z ERROR dial failed, retrying error=dial tcp 10.0.0.7:9443: connect: connection refused`,
		`[warn] dial failed, retrying: dial tcp 10.0.0.7:9443: connect: connection refused`,
		`W1124 10:00:01.000000       1 client.go:42] dial failed, retrying: dial tcp 10.0.0.7:9443: connect: connection refused`,
		`dial failed, retrying - dial tcp 10.0.0.7:9443: connect: connection refused`,
	}
	want := ReadLine(same[0]).Signal.Key
	if want == "" {
		t.Fatal("the first line reads as no failure")
	}
	for _, l := range same[1:] {
		if got := ReadLine(l).Signal.Key; got != want {
			t.Errorf("ReadLine(%q).Key = %q, want %q", l, got, want)
		}
	}
	other := ReadLine(`{"level":"error","msg":"buffer full, dropping events"}`).Signal.Key
	if other == want {
		t.Errorf("two failures share the key %q", want)
	}
}

func TestReadLineTime(t *testing.T) {
	tests := []struct {
		line  string
		want  time.Time
		dated bool
	}{
		{`{"level":"warn","ts":"2026-11-24T10:00:01.5Z","msg":"x"}`, time.Date(2026, 11, 24, 10, 0, 1, 5e8, time.UTC), true},
		{`{"time" : "2026-11-24T10:00:01+01:00","msg":"x"}`, time.Date(2026, 11, 24, 9, 0, 1, 0, time.UTC), true},
		{`2026-11-24T10:00:01.123456789Z stdout line`, time.Date(2026, 11, 24, 10, 0, 1, 123456789, time.UTC), true},
		{`[2026-11-24 10:00:01,250] ERROR x`, time.Date(2026, 11, 24, 10, 0, 1, 25e7, time.UTC), true},
		{`no time here`, time.Time{}, false},
		{`{"level":"warn","ts":1796397774.962106,"msg":"x"}`, time.Unix(1796397774, 962106000).UTC(), true},
		{`{"level":40,"time":1796397774962,"msg":"x"}`, time.Unix(1796397774, 962000000).UTC(), true},
		{`{"level":"warn","attempt":3,"msg":"x"}`, time.Time{}, false},
		{`ts=2026-11-24T10:00:01.5Z level=warn msg="x"`, time.Date(2026, 11, 24, 10, 0, 1, 5e8, time.UTC), true},
		{`level=error time="2026-11-24 10:00:01" msg="x"`, time.Date(2026, 11, 24, 10, 0, 1, 0, time.UTC), true},
		{`level=error uptime=2026-11-24T10:00:01Z msg="x"`, time.Time{}, false},
		{`ERROR boom at 2026-11-24T14:00:32Z`, time.Time{}, false},
	}
	for _, tt := range tests {
		l := ReadLine(tt.line)
		if l.Dated != tt.dated || !l.At.Equal(tt.want) {
			t.Errorf("ReadLine(%q) time = %v %v, want %v %v", tt.line, l.At, l.Dated, tt.want, tt.dated)
		}
	}
}

// FuzzReadLine: any line reads without a panic, and what a failure shows is the line's own.
func FuzzReadLine(f *testing.F) {
	for _, s := range []string{
		"panic: runtime error: index out of range", `{"level":"error","msg":"dial tcp 10.0.0.1:5432: connection refused"}`,
		"Request log error: x", "level=fatal msg=\"boom\" err=\"x", "\xff\xfe error", `msg="a\"b" level=warn x=`,
		`10.244.3.1 - - [24/Nov/2026:10:20:40 +0000] "GET /healthz HTTP/1.1" 404 153 "-"`, `E1124 10:20:40.123456 1 main.go:42] x`,
		`[error`, `[`, `=`, `{"msg":`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l := ReadLine(line)
		if len(l.Text) > len(line)+64 || len(l.Signal.Text) > len(line)+64 {
			t.Fatalf("shown text %d bytes from a %d-byte line", len(l.Text), len(line))
		}
		if l.Signal.Failing != (l.Signal.Key != "" || l.Signal.Severity != SeverityNone) && l.Signal.Failing {
			t.Fatalf("ReadLine(%q): failing without a severity or key: %+v", line, l.Signal)
		}
	})
}

// FuzzDecodeFields holds the scan of JSON log lines to what encoding/json reads.
func FuzzDecodeFields(f *testing.F) {
	for _, s := range []string{
		`{"level":"warn","ts":"2026-11-24T11:05:00Z","msg":"upstream dial failed","error":"dial tcp 10.96.0.7:8443: connect: connection refused"}`,
		`{"LEVEL":"error","Msg":"a","msg":"b","attempt":3,"ok":true,"n":null,"ctx":{"msg":"inner","l":[1,"x",{"y":"]"}]}}`,
		`{"err": {"code": 5}, "error" : "x\"y", "endpoint":"h:1"}`, `{"msg":"caf\u00e9"}`, `{"msg":"café"}`,
		`{"ſeverity":"x","msg":"\xff"}`, `{}`, `{"a":[]}`, `{"msg":1e5 , "level" :"warn" }`, `{"msg":"x"} trailing`, `{"msg":`, `[1,2]`,
		`{"b":"2","a":"1","time":"t"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		want, wantOK := unmarshalFields(line)
		got, ok := decodeFields(line)
		if ok != wantOK || ok && got != want {
			t.Errorf("decodeFields(%q) = %+v, %v; encoding/json reads %+v, %v", line, got, ok, want, wantOK)
		}
	})
}

// FuzzJSONTimeField holds the scan that dates JSON log lines to the regular expression it
// stands in for.
func FuzzJSONTimeField(f *testing.F) {
	for _, s := range []string{
		`{"level":"warn","ts":"2026-11-24T11:05:00Z","msg":"x"}`, `{"time" : "2026-11-24T11:05:00.123+01:00"}`,
		`{"timestamp":"","ts":"2026-11-24T11:05:00Z"}`, `{"@timestamp":	"2026-11-24 11:05:00"}`, `{"ts":1732446300}`,
		`{"msg":"the \"ts\":\"x\" field"}`, `{"times":"no","ts" :"yes"}`, `{"ts"`, `"ts":"a"`, `{"ts":"unterminated`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		want := ""
		if m := reJSONTime.FindStringSubmatch(line); m != nil {
			want = m[1]
		}
		if got := jsonTimeField(line); got != want {
			t.Errorf("jsonTimeField(%q) = %q, the regular expression says %q", line, got, want)
		}
	})
}

var reJSONTime = regexp.MustCompile(`"(?:ts|time|timestamp|@timestamp)"\s*:\s*"([^"]+)"`)

func TestLeadingLevelWord(t *testing.T) {
	for _, tt := range []struct {
		line  string
		level Level
	}{
		{"Error: open /etc/api/config.yaml: no such file or directory", LevelError},
		{"ERROR:root:cannot open queue", LevelError},
		{"[warn] slow start", LevelWarn},
		{"Errors are counted per minute", LevelNone},
		{"info.go:12 started", LevelNone},
	} {
		if got := ReadLine(tt.line).Level; got != tt.level {
			t.Errorf("ReadLine(%q).Level = %v, want %v", tt.line, got, tt.level)
		}
	}
}

// Other runtimes word the same failures otherwise: errno names, library prose.
func TestFailureVocabulary(t *testing.T) {
	for _, line := range []string{
		`Error: connect ECONNREFUSED 10.96.0.7:5432`,
		`{"level":30,"msg":"request to telemetry-intake.internal:9443 errored: getaddrinfo ENOTFOUND telemetry-intake.internal"}`,
		`2026-11-24T10:00:01Z upstream connection rejected by 10.0.0.7:9443`,
		`FEATURE_FLAGS is empty; refusing to start with the default feature set`,
		`archive exporter: missing credential missing=ARCHIVE_S3_SECRET_ACCESS_KEY`,
		`thread 'main' panicked at src/main.rs:12:5: Os { code: 110, kind: TimedOut, message: "ETIMEDOUT" }`,
		`WARN pool exhausted, waiting for a connection`,
	} {
		if !ReadLine(line).Signal.Failing {
			t.Errorf("ReadLine(%q) is no failure", line)
		}
	}
	for _, line := range []string{
		`{"level":"info","msg":"errno table loaded","codes":"ECONNREFUSED,ETIMEDOUT"}`,
		`INFO cache entries: 120, evictions: 0`,
	} {
		if ReadLine(line).Signal.Failing {
			t.Errorf("ReadLine(%q) is a failure", line)
		}
	}
}

func TestClassOf(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want Class
	}{
		{"flag provided but not defined: -tile-cache", ClassConfig},
		{"error: unrecognized arguments: --workers=8", ClassConfig},
		{"required environment variable DATABASE_URL is not set", ClassConfig},
		{`FATAL:  password authentication failed for user "billing"`, ClassAuth},
		{`FATAL: password authentication did not succeed for user "billing"`, ClassAuth},
		{"Access denied for user 'app'@'10.244.1.7' (using password: YES)", ClassAuth},
		{"dial tcp 10.96.0.7:5432: connect: connection refused", ClassConnection},
		{"com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure", ClassConnection},
		{"lookup orders-db on 10.96.0.10:53: no such host", ClassConnection},
		{`java.sql.SQLNonTransientConnectionException: Data source rejected establishment of connection,  message from server: "Too many connections"`, ClassConnection},
		{"FATAL:  sorry, too many clients already", ClassConnection},
		{"open /etc/app/config.yaml: no such file or directory", ClassNotFound},
		{"java.lang.OutOfMemoryError: Java heap space", ClassOther},
		{"fatal error: runtime: out of memory", ClassResource},
		{"panic: runtime error: invalid memory address or nil pointer dereference", ClassOther},
	} {
		if got := ClassOf(tt.msg); got != tt.want {
			t.Errorf("ClassOf(%q) = %s, want %s", tt.msg, got, tt.want)
		}
	}
}

// A stack trace's frames say where, not what; its exception and "Caused by:" lines say what.
func TestStackFramesAreNoFailure(t *testing.T) {
	for _, line := range []string{
		"\tat com.mysql.cj.jdbc.exceptions.SQLError.createCommunicationsException(SQLError.java:165) ~[mysql-connector-j-9.1.0.jar!/:9.1.0]",
		"\tat java.base/sun.nio.ch.Net.pollConnect(Native Method) ~[na:na]",
		"    at Object.<anonymous> (/app/server.js:12:9)",
		"\t... 42 common frames omitted",
		`  File "/app/worker.py", line 88, in connect`,
		"\t/usr/local/go/src/net/dial.go:12 +0x1d",
		// Python's traceback.py announces frames and exception below it.
		"Traceback (most recent call last):",
		"During handling of the above exception, another exception occurred:",
	} {
		if ReadLine(line).Signal.Failing {
			t.Errorf("ReadLine(%q) is a failure", line)
		}
	}
	for _, line := range []string{
		"Caused by: java.net.ConnectException: Connection refused",
		"com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure",
		"psycopg2.OperationalError: could not connect to server: Connection refused",
	} {
		if !ReadLine(line).Signal.Failing {
			t.Errorf("ReadLine(%q) is no failure", line)
		}
	}
}

// pino and bunyan write the level as a number and serialize an error as an object; the error's
// message is what the line reports.
func TestNumericLevelsAndErrorObjects(t *testing.T) {
	tests := []struct {
		name, line string
		level      Level
		class      Class
		failing    bool
	}{
		{
			"pino fatal with an err object",
			`{"level":60,"time":1794950017255,"pid":1,"msg":"failed to start","err":{"type":"Error","message":"connect ECONNREFUSED 10.96.122.40:5433","code":"ECONNREFUSED"}}`,
			LevelError, ClassConnection, true,
		},
		{
			"bunyan error with an error object under error",
			`{"name":"billing","hostname":"b-1","pid":7,"level":50,"error":{"message":"getaddrinfo ENOTFOUND billing-db.shop.svc","name":"Error"},"msg":"db connect","time":"2026-11-17T21:15:56.000Z","v":0}`,
			LevelError, ClassConnection, true,
		},
		{
			"pino info is not a failure",
			`{"level":30,"time":1794950017228,"pid":1,"msg":"loaded configuration","file":"/etc/report-api/config.yaml"}`,
			LevelInfo, ClassOther, false,
		},
		{
			"pino debug naming an error is not a failure",
			`{"level":20,"msg":"will retry","err":{"message":"connect ECONNREFUSED 10.0.0.1:80"}}`,
			LevelDebug, ClassOther, false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ReadLine(tt.line)
			if l.Level != tt.level {
				t.Errorf("level = %v, want %v", l.Level, tt.level)
			}
			if l.Signal.Failing != tt.failing {
				t.Fatalf("failing = %v, want %v (%+v)", l.Signal.Failing, tt.failing, l.Signal)
			}
			if tt.failing && l.Signal.Class != tt.class {
				t.Errorf("class = %v, want %v", l.Signal.Class, tt.class)
			}
		})
	}
}

// A header that announces the lines below it is not the failure by its level alone.
func TestAnnouncingErrorLine(t *testing.T) {
	for _, tt := range []struct {
		line    string
		failing bool
	}{
		{`2026-11-12T14:47:56.551Z ERROR 1 --- [order-processor] [           main] o.s.b.d.LoggingFailureAnalysisReporter   : `, false},
		{`2026-11-12 14:47:56 ERROR [main] startup: `, false},
		{`2026-11-12 14:47:56 ERROR [main] startup failed:`, true},
		{`Web server failed to start. Port 9090 was already in use.`, true},
		{`2026-11-12 14:47:56 ERROR [main] buffer full, dropping events`, true},
	} {
		if got := ReadLine(tt.line).Signal.Failing; got != tt.failing {
			t.Errorf("%q: failing = %v, want %v", tt.line, got, tt.failing)
		}
	}
}
