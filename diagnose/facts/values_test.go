package facts

import (
	"net"
	"regexp"
	"testing"
)

func hasToken(toks []Value, kind ValueKind, text string) bool {
	for _, t := range toks {
		if t.Kind == kind && t.Text == text {
			return true
		}
	}
	return false
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Value // Kind and Text
		not  []Value
	}{
		{
			name: "dial error names an IP and port",
			in:   `{"level":"warn","caller":"forwarder/conn.go:131","endpoint":"telemetry-intake.internal:9443","error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`,
			want: []Value{
				{Kind: ValueHostPort, Text: "10.96.14.7:9443"},
				{Kind: ValueHostPort, Text: "telemetry-intake.internal:9443"},
				{Kind: ValueHost, Text: "telemetry-intake.internal"},
				{Kind: ValueQuoted, Text: "telemetry-intake.internal:9443"},
			},
			not: []Value{{Kind: ValueHostPort, Text: "conn.go:131"}, {Kind: ValueHost, Text: "conn.go"}},
		},
		{
			name: "timestamps are not host:port",
			in:   `2026/11/24 10:20:40 [error] 34#34: *1 open() "/usr/share/nginx/html/healthz" failed (2: No such file or directory), request: "GET /healthz HTTP/1.1", host: "10.244.3.2:8080"`,
			want: []Value{{Kind: ValuePath, Text: "/usr/share/nginx/html/healthz"}, {Kind: ValuePath, Text: "/healthz"}, {Kind: ValueHostPort, Text: "10.244.3.2:8080"}},
			not:  []Value{{Kind: ValueHostPort, Text: "10:20"}, {Kind: ValuePort, Text: "20"}, {Kind: ValuePort, Text: "40"}},
		},
		{
			name: "URL parts",
			in:   `Post "https://payments.partner.example:8443/v1/charge": dial tcp: lookup payments.partner.example on 10.96.0.10:53: no such host`,
			want: []Value{
				{Kind: ValueURL, Text: "https://payments.partner.example:8443/v1/charge"},
				{Kind: ValueHostPort, Text: "payments.partner.example:8443"},
				{Kind: ValuePath, Text: "/v1/charge"},
				{Kind: ValueHost, Text: "payments.partner.example"},
			},
		},
		{
			name: "bare port",
			in:   "listen tcp :8080: bind: address already in use",
			want: []Value{{Kind: ValuePort, Text: "8080"}},
		},
		{
			name: "go flag error",
			in:   "flag provided but not defined: -listen-address",
			want: []Value{{Kind: ValueFlag, Text: "listen-address"}},
		},
		{
			name: "variable names but not log levels",
			in:   `2026-11-24 10:20:35.120 ERROR 1 --- [main] config: DATABASE_URL is not set ($CACHE_ADDR too)`,
			want: []Value{{Kind: ValueEnvName, Text: "DATABASE_URL"}, {Kind: ValueEnvName, Text: "CACHE_ADDR"}},
			not:  []Value{{Kind: ValueEnvName, Text: "ERROR"}},
		},
		{
			name: "logfmt value names a variable",
			in:   `time=2026-11-25T09:40:01.118Z level=ERROR msg="archive exporter: missing credential" missing=ARCHIVE_S3_SECRET_ACCESS_KEY bucket=s3://telemetry-archive-eu-west-1`,
			want: []Value{{Kind: ValueEnvName, Text: "ARCHIVE_S3_SECRET_ACCESS_KEY"}, {Kind: ValueURL, Text: "s3://telemetry-archive-eu-west-1"}},
		},
		{
			name: "ISO timestamp is no host",
			in:   `time=2026-11-24T11:58:02.114Z level=ERROR msg="x"`,
			not:  []Value{{Kind: ValueHostPort, Text: "2026-11-24t11:58"}, {Kind: ValueHost, Text: "2026-11-24t11"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Values(tt.in)
			for _, w := range tt.want {
				if !hasToken(got, w.Kind, w.Text) {
					t.Errorf("missing token %d %q in %+v", w.Kind, w.Text, got)
				}
			}
			for _, n := range tt.not {
				if hasToken(got, n.Kind, n.Text) {
					t.Errorf("unexpected token %d %q", n.Kind, n.Text)
				}
			}
		})
	}
}

// FuzzTokenize: any message, however malformed, tokenizes without a panic into well-formed
// tokens.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		`dial tcp 10.96.14.7:9443: connect: connection refused`,
		`Get "http://[::1]:8080/healthz": dial tcp [::1]:8080: connect: connection refused`,
		`"GET /healthz HTTP/1.1" 404`, `flag provided but not defined: -x`, `://`, `a://b:99999/c`,
		`"unterminated`, `--=`, `$`, `:0`, "\x00\xff:80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Values(s) {
			if tok.Port != "" && !ValidPort(tok.Port) {
				t.Errorf("token %+v has an invalid port", tok)
			}
			if tok.Text == "" {
				t.Errorf("empty token %+v", tok)
			}
		}
	})
}

func FuzzIsTimestamp(f *testing.F) {
	re := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}`)
	for _, s := range []string{"2026-11-24T11:05:00Z", "2026-11-24 11:05", "2026-11-24T11:0", "2026-11-24X11:05:00", "１２３４-11-24T11:05", "db-credentials"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isTimestamp(s), re.MatchString(s); got != want {
			t.Errorf("isTimestamp(%q) = %v, want %v", s, got, want)
		}
	})
}

func FuzzMayBeIP(f *testing.F) {
	for _, s := range []string{"10.96.14.7", "::1", "fe80::1", "2001:db8::ff00:42:8329", "::ffff:10.0.0.1", "cafe", "redis.cache", "1.2.3.4.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if net.ParseIP(s) != nil && !mayBeIP(s) {
			t.Errorf("mayBeIP(%q) = false for an IP address", s)
		}
	})
}
