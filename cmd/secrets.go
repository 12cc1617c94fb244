package cmd

import (
	"github.com/spf13/pflag"

	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
)

// addShowSecretsFlag binds --show-secrets, which the commands that print take and serve never
// does: what a server answers is read by others than the one who started it.
func (o *SourceOptions) addShowSecretsFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "Print credentials as they were read: env values whose names say PASSWORD, SECRET, TOKEN, KEY..., URL passwords, Authorization headers and password=... pairs in logs and arguments. By default each reads [redacted:XXXX], equal values with equal marks.")
}

// redactor is what hides credentials in this command's output; nil with --show-secrets.
func (o *SourceOptions) redactor() *redact.Redactor { return redact.For(o.ShowSecrets) }
