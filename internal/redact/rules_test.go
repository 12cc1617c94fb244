package redact

import (
	"strings"
	"testing"
)

// withKey returns a Redactor whose marks are keyed by key, so they do not change between runs.
func withKey(key []byte) *Redactor { return &Redactor{key: append([]byte(nil), key...)} }

func TestCredentialName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"DB_PASSWORD", true},
		{"dbPassword", true},
		{"MYSQL_ROOT_PASSWD", true},
		{"GPG_PASSPHRASE", true},
		{"CLIENT_SECRET", true},
		{"GITHUB_TOKEN", true},
		{"accessToken", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"DB_CREDENTIALS", true},
		{"REDIS_PASS", true},
		{"DB_PWD", true},
		{"API_KEY", true},
		{"apiKey", true},
		{"SSHKEY", true},
		{"STRIPE_KEY", true},
		{"AUTH_HEADER", true},
		{"authorization", true},
		{"--db-password", true},
		{"spring.datasource.password", true},
		// Not credentials: words that only look alike, and the bare words.
		{"INGEST_ENDPOINT", false},
		{"KEYCLOAK_URL", false},
		{"PASSENGER_COUNT", false},
		{"PATHWAY", false},
		{"OAUTH_PROVIDER", false},
		{"KEY", false},
		{"auth", false},
		{"LOG_LEVEL", false},
		{"", false},
	} {
		if got := classify(tt.name) != notCredential; got != tt.want {
			t.Errorf("classify(%q) says credential %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A weak name hides its value unless the value is a setting or an address: an env var that
// points a workload at its auth service is what a diagnosis is about.
func TestCredentialValuesOfWeakNames(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{"AUTH_URL", "https://auth.shop.svc:8443", false},
		{"AUTH_URL", "https://svc:pw@auth.shop.svc:8443", true},
		{"CACHE_KEY_TTL", "30s", false},
		{"AUTH_ENABLED", "true", false},
		{"API_KEY", "k-7781", true},
		{"DB_PASSWORD", "1234", true},
		{"DB_PASSWORD", "https://example.com", true},
		{"LOG_LEVEL", "debug", false},
	} {
		if got := Credential(tt.name, tt.value); got != tt.want {
			t.Errorf("Credential(%q, %q) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestTextHidesWhatItsFormShows(t *testing.T) {
	r := withKey([]byte("test"))
	m := r.Mark
	for _, tt := range []struct {
		name, in, want string
	}{
		{"logfmt pair", `level=error password=hunter2 user=app`, `level=error password=` + m("hunter2") + ` user=app`},
		{"flags", `--db-password=hunter2 --api-key=k-7781 --listen=:8080`, `--db-password=` + m("hunter2") + ` --api-key=` + m("k-7781") + ` --listen=:8080`},
		{"JSON", `{"user":"app","password":"hunter2"}`, `{"user":"app","password":"` + m("hunter2") + `"}`},
		{"JSON in a string", `msg="{\"password\":\"hunter2\"}"`, `msg="{\"password\":\"` + m("hunter2") + `\"}"`},
		{"Go struct", `{User:app Password:hunter2}`, `{User:app Password:` + m("hunter2") + `}`},
		{"URL userinfo", `dial postgres://app:hunter2@db:5432/orders`, `dial postgres://app:` + m("hunter2") + `@db:5432/orders`},
		{"URL without a user", `redis://:hunter2@cache:6379`, `redis://:` + m("hunter2") + `@cache:6379`},
		{"URL query", `GET /cb?state=x&access_token=abc123&y=1`, `GET /cb?state=x&access_token=` + m("abc123") + `&y=1`},
		{"Authorization header", `Authorization: Bearer abcdef12345678`, `Authorization: Bearer ` + m("abcdef12345678")},
		{"Basic in a quoted header", `curl -H "Authorization: Basic dXNlcjpwYXNz" https://x`, `curl -H "Authorization: Basic ` + m("dXNlcjpwYXNz") + `" https://x`},
		{"bearer alone", `sending bearer eyJhbGciOi.eyJzdWIi.c2ln1 upstream`, `sending bearer ` + m("eyJhbGciOi.eyJzdWIi.c2ln1") + ` upstream`},
		// Prose, kubelet messages and settings are left as they are.
		{"prose after a colon", `failed to refresh token: connection refused`, `failed to refresh token: connection refused`},
		{"a bearer token in prose", `a bearer token is missing`, `a bearer token is missing`},
		{"kubelet mount", `MountVolume.SetUp failed for volume "db-password" : secret "db-password" not found`, `MountVolume.SetUp failed for volume "db-password" : secret "db-password" not found`},
		{"address under a weak name", `AUTH_URL=https://auth.shop.svc:8443`, `AUTH_URL=https://auth.shop.svc:8443`},
		{"setting under a weak name", `CACHE_KEY_TTL=30s`, `CACHE_KEY_TTL=30s`},
		{"URL without a password", `GET https://app@registry.internal/v2/`, `GET https://app@registry.internal/v2/`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Text(tt.in)
			if got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := r.Text(got); again != got {
				t.Errorf("Text of its own output changed it: %q -> %q", got, again)
			}
		})
	}
}

func TestKnownValuesAreHiddenWhereTheyStandAndWhereTheyWereCut(t *testing.T) {
	r := withKey([]byte("test"))
	known := []string{"pg-Secret-rev2"}
	got := r.text(`login refused for pg-Secret-rev2; retrying with pg-Secret-r…`, known)
	want := `login refused for ` + r.Mark("pg-Secret-rev2") + `; retrying with ` + r.Mark("pg-Secret-rev2") + `…`
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMarksAreKeyedAndStable(t *testing.T) {
	a, b := withKey([]byte("a")), withKey([]byte("b"))
	first, again := a.Mark("hunter2"), a.Mark("hunter2")
	if first != again {
		t.Error("one value, two marks under one key")
	}
	if a.Mark("hunter2") == a.Mark("hunter3") {
		t.Error("two values, one mark")
	}
	if a.Mark("hunter2") == b.Mark("hunter2") {
		t.Error("the mark does not depend on the key: it could be checked against a guess")
	}
	if m := a.Mark("x"); !IsMark(m) || len(m) != len("[redacted:3f2a]") {
		t.Errorf("mark %q: want [redacted:XXXX]", m)
	}
	// Two keys drawn apart give two marks of one value, but for a 1-in-65,536 chance: of two
	// values, both marks alike is a 1-in-4-billion chance.
	one, other := New(), New()
	if one.Mark("x") == other.Mark("x") && one.Mark("y") == other.Mark("y") {
		t.Error("New draws the same key twice")
	}
}

func TestNilRedactorShowsEverything(t *testing.T) {
	var r *Redactor
	if got := r.Text("password=hunter2"); got != "password=hunter2" {
		t.Errorf("nil Redactor: %q", got)
	}
	if For(true) != nil || For(false) == nil {
		t.Error("For(show) should be nil exactly when secrets are shown")
	}
	if !strings.HasPrefix(For(false).Text("password=hunter2"), "password=[redacted:") {
		t.Error("For(false) does not redact")
	}
}
