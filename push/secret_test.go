package push

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Secrets that must never appear in any output.
const (
	secretCred  = "cred-7f3a9c1e-do-not-leak"
	secretToken = "tok-51b2d8e0-do-not-leak"
)

func TestSecretRedaction(t *testing.T) {
	s := Secret{Credentials: secretCred, Token: secretToken}
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.Info("x", "secret", s, "ptr", &s)
	b, _ := json.Marshal(map[string]any{"s": s})
	out := fmt.Sprintf("%v %+v %#v %s %q %d %x", s, s, s, s, s, s, s) + buf.String() + string(b)
	mustNotContain(t, "formatted secret", out, secretCred, secretToken)
	if !strings.Contains(out, redacted) {
		t.Fatal("redaction marker missing")
	}
}
