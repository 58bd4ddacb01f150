// Package tokenshapes holds one example of each token shape the redactor
// and the secrets interceptor recognise, and a near miss of it, for their
// tests. The examples are built, not written whole, and say CANARY where
// the shape allows letters: none is a real credential.
package tokenshapes

import "strings"

// Example is one token shape's test case: Positive must be recognised as
// Name, Negative (a near miss: too short, a wrong prefix or alphabet) by
// no shape at all.
type Example struct {
	Name               string
	Positive, Negative string
}

// fill repeats alphabet to n characters.
func fill(alphabet string, n int) string {
	return strings.Repeat(alphabet, n/len(alphabet)+1)[:n]
}

const (
	alnum  = "CANARY0123456789abcdefghijklmnopqrstuvwxyz"
	hex    = "0123456789abcdef"
	letter = "CANARYabcdefghijklmnopqrstuvwxyz"
	b64    = "CANARY0123456789abcdefghijklmnopqrstuvwxyz+/"
)

// Examples returns one example per token shape, in the order of
// redact.TokenPatterns.
func Examples() []Example {
	return []Example{
		{"GitHub token", "ghp_" + fill(alnum, 36), "ghx_" + fill(alnum, 36)},
		{"GitHub fine-grained token", "github_pat_11" + fill(alnum, 20) + "_" + fill(alnum, 30), "github_pat_" + fill(alnum, 8)},
		{"GitLab token", "glpat-" + fill(alnum, 20), "glpat-" + fill(alnum, 12)},
		{"GitLab deploy token", "gldt-" + fill(alnum, 24), "gldt-" + fill(alnum, 10)},
		{"GitLab runner token", "glrt-" + fill(alnum, 20), "glrtx-" + fill(alnum, 20)},
		{"OpenAI or Anthropic API key", "sk-proj-" + fill(alnum, 32), "sk-" + fill(alnum, 8)},
		{"Slack token", "xoxb-1234567890-" + fill(alnum, 24), "xoxz-1234567890-" + fill(alnum, 24)},
		{"Slack app token", "xapp-1-A0CANARY-1234567890-" + fill(hex, 32), "xapp-one-A0CANARY-" + fill(hex, 8)},
		{"Slack webhook URL", "https://hooks.slack.com/services/T0CANARY/B0CANARY/" + fill(alnum, 24), "https://hooks.slack.com/workflows/T0CANARY/B0CANARY/" + fill(alnum, 24)},
		{"AWS access key ID", "AKIACANARY0123456789", "AKIACANARY01234567"},
		{"AWS secret access key", "aws_secret_access_key = " + fill(b64, 40), "aws_secret_access_key = " + fill(b64, 20)},
		{"Google API key", "AIza" + fill(alnum, 35), "AIza" + fill(alnum, 20)},
		{"Google OAuth client secret", "GOCSPX-" + fill(alnum, 28), "GOCSPX-" + fill(alnum, 12)},
		{"Azure storage account key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + fill(b64, 86) + "==", "AccountKey=" + fill(b64, 40)},
		{"Stripe key", "sk_live_" + fill(alnum, 24), "sk_prod_" + fill(alnum, 24)},
		{"Stripe webhook secret", "whsec_" + fill(alnum, 32), "whsec_" + fill(alnum, 16)},
		{"npm token", "npm_" + fill(alnum, 36), "npm_" + fill(alnum, 20)},
		{"PyPI token", "pypi-AgEIcHlwaS5vcmc" + fill(alnum, 60), "pypi-AgEIcHlwaS5vcmc" + fill(alnum, 10)},
		{"SendGrid API key", "SG." + fill(alnum, 22) + "." + fill(alnum, 43), "SG." + fill(alnum, 10) + "." + fill(alnum, 10)},
		{"Twilio API key", "SK" + fill(hex, 32), "SK" + strings.ToUpper(fill(hex, 32))},
		{"Hugging Face token", "hf_" + fill(letter, 34), "hf_" + fill(alnum, 34)},
		{"Vault token", "hvs." + fill(alnum, 24), "hvs." + fill(alnum, 10)},
		{"DigitalOcean token", "dop_v1_" + fill(hex, 64), "dop_v2_" + fill(hex, 64)},
		{"Shopify token", "shpat_" + fill(hex, 32), "shpxx_" + fill(hex, 32)},
		{"JSON Web Token", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJDQU5BUlkifQ.CANARYsig_-abc", "eyJhbGciOiJSUzI1NiJ9"},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIBCANARY\n-----END RSA PRIVATE KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBCANARY\n-----END PUBLIC KEY-----"},
	}
}
