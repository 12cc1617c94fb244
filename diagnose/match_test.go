package diagnose

import (
	"net"
	"regexp"
	"testing"
)

func hasToken(toks []token, kind tokenKind, text string) bool {
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
		want []token // Kind and Text
		not  []token
	}{
		{
			name: "dial error names an IP and port",
			in:   `{"level":"warn","caller":"forwarder/conn.go:131","endpoint":"telemetry-intake.internal:9443","error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`,
			want: []token{
				{Kind: tokHostPort, Text: "10.96.14.7:9443"},
				{Kind: tokHostPort, Text: "telemetry-intake.internal:9443"},
				{Kind: tokHost, Text: "telemetry-intake.internal"},
				{Kind: tokQuoted, Text: "telemetry-intake.internal:9443"},
			},
			not: []token{{Kind: tokHostPort, Text: "conn.go:131"}, {Kind: tokHost, Text: "conn.go"}},
		},
		{
			name: "timestamps are not host:port",
			in:   `2026/11/24 10:20:40 [error] 34#34: *1 open() "/usr/share/nginx/html/healthz" failed (2: No such file or directory), request: "GET /healthz HTTP/1.1", host: "10.244.3.2:8080"`,
			want: []token{{Kind: tokPath, Text: "/usr/share/nginx/html/healthz"}, {Kind: tokPath, Text: "/healthz"}, {Kind: tokHostPort, Text: "10.244.3.2:8080"}},
			not:  []token{{Kind: tokHostPort, Text: "10:20"}, {Kind: tokPort, Text: "20"}, {Kind: tokPort, Text: "40"}},
		},
		{
			name: "URL parts",
			in:   `Post "https://payments.partner.example:8443/v1/charge": dial tcp: lookup payments.partner.example on 10.96.0.10:53: no such host`,
			want: []token{
				{Kind: tokURL, Text: "https://payments.partner.example:8443/v1/charge"},
				{Kind: tokHostPort, Text: "payments.partner.example:8443"},
				{Kind: tokPath, Text: "/v1/charge"},
				{Kind: tokHost, Text: "payments.partner.example"},
			},
		},
		{
			name: "bare port",
			in:   "listen tcp :8080: bind: address already in use",
			want: []token{{Kind: tokPort, Text: "8080"}},
		},
		{
			name: "go flag error",
			in:   "flag provided but not defined: -listen-address",
			want: []token{{Kind: tokFlag, Text: "listen-address"}},
		},
		{
			name: "variable names but not log levels",
			in:   `2026-11-24 10:20:35.120 ERROR 1 --- [main] config: DATABASE_URL is not set ($CACHE_ADDR too)`,
			want: []token{{Kind: tokEnvName, Text: "DATABASE_URL"}, {Kind: tokEnvName, Text: "CACHE_ADDR"}},
			not:  []token{{Kind: tokEnvName, Text: "ERROR"}},
		},
		{
			name: "logfmt value names a variable",
			in:   `time=2026-11-25T09:40:01.118Z level=ERROR msg="archive exporter: missing credential" missing=ARCHIVE_S3_SECRET_ACCESS_KEY bucket=s3://telemetry-archive-eu-west-1`,
			want: []token{{Kind: tokEnvName, Text: "ARCHIVE_S3_SECRET_ACCESS_KEY"}, {Kind: tokURL, Text: "s3://telemetry-archive-eu-west-1"}},
		},
		{
			name: "ISO timestamp is no host",
			in:   `time=2026-11-24T11:58:02.114Z level=ERROR msg="x"`,
			not:  []token{{Kind: tokHostPort, Text: "2026-11-24t11:58"}, {Kind: tokHost, Text: "2026-11-24t11"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tokenize(tt.in)
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

func TestMatchValue(t *testing.T) {
	own := map[string]bool{"10.244.3.2": true}
	tests := []struct {
		name, failure, value string
		want                 int
	}{
		{"whole host:port", `"endpoint":"telemetry-intake.internal:9443"`, "telemetry-intake.internal:9443", strengthExact},
		{"port of a resolved host", "dial tcp 10.96.14.7:9443: connect: connection refused", "telemetry-intake.internal:9443", strengthPort},
		{"port of another named host", "dial tcp intake-b.internal:9443: i/o timeout", "intake-a.internal:9443", 0},
		{"different port", "dial tcp 10.96.14.7:8443: connect: connection refused", "telemetry-intake.internal:9443", 0},
		{"host in a URL value", "lookup orders-db.shop.svc on 10.96.0.10:53: no such host", "postgres://orders-db.shop.svc:5432/orders", strengthHost},
		{"URL path", `"GET /healthz HTTP/1.1" 404 153`, "/healthz", strengthHost},
		{"similar path", `"GET /healthz HTTP/1.1" 404 153`, "/health", 0},
		{"file under a directory", "open /etc/api/config.yaml: no such file or directory", "/etc/api", strengthSubpath},
		{"flag with a value", "flag provided but not defined: -listen-address", "--listen-address=:8080", strengthExact},
		{"the pod's own address", `host: "10.244.3.2:8080"`, "0.0.0.0:8080", 0},
		{"short value", `secret "db" not found`, "db", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchValue(tokenize(tt.failure), tt.value, own); got.Strength != tt.want {
				t.Errorf("strength = %d (%s), want %d", got.Strength, got.What, tt.want)
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
		for _, tok := range tokenize(s) {
			if tok.Port != "" && !validPort(tok.Port) {
				t.Errorf("token %+v has an invalid port", tok)
			}
			if tok.Text == "" {
				t.Errorf("empty token %+v", tok)
			}
		}
	})
}

// The fast paths of the hot loops must decide exactly as the regular expressions and parsers
// they stand in front of; these fuzz targets (with their seeds run by go test) hold them to it.

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

// FuzzIsNotConfig holds the suffix test in front of notConfig to the expression alone.
func FuzzIsNotConfig(f *testing.F) {
	for _, p := range []string{
		"spec.template.spec.containers[0].name",
		"spec.template.spec.containers[0].image",
		"spec.template.spec.initContainers[1].env[2].name",
		"spec.template.spec.containers[0].env[2].value",
		"spec.template.metadata.labels[app]",
		"spec.template.metadata.annotations[a]",
		"spec.template.spec.containers[0].terminationMessagePath",
		"spec.template.spec.containers[0].imagePullPolicy",
		"spec.template.spec.restartPolicy",
		"spec.template.spec.volumes[0].configMap.name",
		"spec.template.spec.containers[0].volumeMounts[0].mountPath",
		"x.ports[3].name\n",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := isNotConfig(p), notConfig.MatchString(p); got != want {
			t.Errorf("isNotConfig(%q) = %v, the expression says %v", p, got, want)
		}
	})
}
