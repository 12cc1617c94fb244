package rules

import "testing"

// What programs print when a variable is missing, each as its ecosystem writes it, and lines
// that name a variable without saying it is unset.
func TestSaysUnset(t *testing.T) {
	for _, tt := range []struct {
		text, name string
		want       bool
	}{
		{`level=error msg="required environment variable DATABASE_URL is not set"`, "DATABASE_URL", true},
		{`panic: API_TOKEN must be set`, "API_TOKEN", true},
		{`Error: Missing environment variable: STRIPE_KEY`, "STRIPE_KEY", true},
		{`Error: missing required env var REDIS_URL`, "REDIS_URL", true},
		{`KeyError: 'DATABASE_URL'`, "DATABASE_URL", true},
		{`java.lang.IllegalArgumentException: Could not resolve placeholder 'DB_HOST' in value "${DB_HOST}"`, "DB_HOST", true},
		{`/entrypoint.sh: line 4: UPSTREAM_URL: unbound variable`, "UPSTREAM_URL", true},
		{`required key DATABASE_URL missing value`, "DATABASE_URL", true},
		{`Error: environment variable "QUEUE_NAME" not found`, "QUEUE_NAME", true},
		{`{"level":"fatal","msg":"config","error":"SMTP_HOST is empty"}`, "SMTP_HOST", true},
		{`please set OPENAI_API_KEY`, "OPENAI_API_KEY", true},
		// Named, but not said to be missing.
		{`missing permissions for S3_BUCKET: AccessDenied`, "S3_BUCKET", false},
		{`ARCHIVE_S3_KEY is required when ARCHIVE_BUCKET is set`, "ARCHIVE_BUCKET", false},
		{`connecting to DATABASE_URL=postgres://db:5432/app`, "DATABASE_URL", false},
		{`MAX_CONNECTIONS exceeded: 100`, "MAX_CONNECTIONS", false},
		// The program goes on without it, or only warns.
		{`level=warn msg="SENTRY_DSN not set"`, "SENTRY_DSN", false},
		{`{"level":"warning","msg":"TRACING_ENDPOINT is not set"}`, "TRACING_ENDPOINT", false},
		{`WARN: CACHE_URL missing`, "CACHE_URL", false},
		{`level=error msg="SENTRY_DSN not set, error reporting disabled"`, "SENTRY_DSN", false},
		{`METRICS_PORT not set, using default 9090`, "METRICS_PORT", false},
		{`level=error msg="CONFIG_PATH is not set, using /etc/app/config.yaml"`, "CONFIG_PATH", false},
		{`LOG_FORMAT unset; defaults to json`, "LOG_FORMAT", false},
		// A longer name that holds the name is another variable.
		{`OLD_DATABASE_URL is not set`, "DATABASE_URL", false},
		{`DATABASE_URL_RO is not set`, "DATABASE_URL", false},
	} {
		if got := saysUnset(tt.text, tt.name); got != tt.want {
			t.Errorf("saysUnset(%q, %s) = %v, want %v", tt.text, tt.name, got, tt.want)
		}
	}
}
