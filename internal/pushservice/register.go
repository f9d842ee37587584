package pushservice

import (
	"context"
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/push"
)

// Spec is a push config as a client registers it (the flat A2A
// TaskPushNotificationConfig).
type Spec struct {
	// ID is the client's config id; "" lets the service mint one.
	ID string
	// URL is the destination; it must pass the guard.
	URL string
	// Scheme and Credentials are authentication.scheme and
	// authentication.credentials.
	Scheme      string
	Credentials string
	// Token is the config's token.
	Token string
}

// Config is a registered push config as it may be shown to a client:
// never the token or the credentials (OpenWOP RFC 0214 §A).
type Config struct {
	TaskID string
	ID     string
	URL    string
	// Scheme is the authentication scheme, "" without authentication.
	Scheme string
}

// configOf is the part of a record a caller may see: no secret, no
// watermark.
func configOf(r *push.Record) Config {
	return Config{TaskID: r.TaskID, ID: r.ID, URL: r.URL, Scheme: r.Scheme}
}

// FieldError is a Spec field the service refuses. Field is the member of
// the A2A request ("url", "id", "authentication.scheme",
// "authentication.credentials", "token"); Reason is short and safe to
// show — it never repeats the value. A refused URL wraps the guard's
// *egress.RefusedError.
type FieldError struct {
	Field  string
	Reason string
	Err    error
}

func (e *FieldError) Error() string { return "push: " + e.Field + ": " + e.Reason }

// Unwrap returns the guard's refusal, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// Limits on the fields of a Spec.
const (
	maxConfigIDLen = 64
	maxSchemeLen   = 64
	maxSecretLen   = 4096
)

// mintConfigID returns a fresh config id: random, so it never encodes the
// tenant, workspace or principal (OpenWOP RFC 0214 §E).
func mintConfigID() string { return "pc-" + isolation.NewOpaque() }

// validate checks everything of spec but the URL, which the guard judges.
func (spec *Spec) validate() error {
	if spec.ID != "" && !validConfigID(spec.ID) {
		return &FieldError{Field: "id", Reason: "id must be 1–64 characters of A–Z, a–z, 0–9, '.', '_', '~' or '-'"}
	}
	if spec.Scheme != "" && !validScheme(spec.Scheme) {
		return &FieldError{Field: "authentication.scheme", Reason: "scheme must be an HTTP authentication scheme token"}
	}
	if spec.Credentials != "" && spec.Scheme == "" {
		return &FieldError{Field: "authentication.scheme", Reason: "credentials need a scheme"}
	}
	if !validHeaderText(spec.Credentials) {
		return &FieldError{Field: "authentication.credentials", Reason: "credentials must be at most 4096 characters without control characters"}
	}
	if !validHeaderText(spec.Token) {
		return &FieldError{Field: "token", Reason: "token must be at most 4096 characters without control characters"}
	}
	return nil
}

func validConfigID(id string) bool {
	if len(id) > maxConfigIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-') {
			return false
		}
	}
	return id != ""
}

// validScheme: an RFC 9110 token.
func validScheme(s string) bool {
	if len(s) > maxSchemeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '!' || c == '#' || c == '$' || c == '%' || c == '&' || c == '\'' || c == '*' ||
			c == '+' || c == '-' || c == '.' || c == '^' || c == '_' || c == '`' || c == '|' || c == '~':
		default:
			return false
		}
	}
	return s != ""
}

// validHeaderText: what may follow "Authorization: scheme " — no control
// characters, in particular no CR or LF that would split the header.
func validHeaderText(s string) bool {
	if len(s) > maxSecretLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// precheck validates spec and applies the guard to its URL without
// registering anything: a request that also starts a task (A2A
// SendMessage with a push config) refuses a bad config before the run
// exists.
func (s *Service) precheck(ctx context.Context, spec Spec) error {
	if err := spec.validate(); err != nil {
		return err
	}
	if _, err := s.guard.Check(ctx, spec.URL); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return &FieldError{Field: "url", Reason: "url must be an https URL of a public host", Err: err}
	}
	return nil
}

// Register adds spec to run's task for sub, who has read the run, and
// returns the config as it may be shown (OpenWOP interop map, a2a.operations; RFC 0214 §A, §B). The URL passes
// the guard now and again at every delivery. A spec with the id of an
// existing config of the task replaces it, and the replaced config's
// secret is discarded. Deliveries start with the first run event after
// run.LastSequence, so nothing already in the log — a replay fork's
// re-emitted history included — is ever pushed (OpenWOP RFC 0214 §D). A run that is
// already terminal gets a config that never delivers and whose secret is
// never kept.
func (s *Service) Register(ctx context.Context, sub interop.Subject, run *interop.Run, spec Spec) (Config, error) {
	if s.closed() {
		return Config{}, ErrClosed
	}
	if err := s.precheck(ctx, spec); err != nil {
		return Config{}, err
	}
	if spec.ID == "" {
		spec.ID = mintConfigID()
	}
	ref := ""
	if !run.Status.Terminal() {
		var err error
		if ref, err = s.seal(ctx, spec); err != nil {
			return Config{}, err
		}
	}
	return s.putConfig(ctx, sub, run, spec, ref)
}

// seal keeps spec's secret in the vault and returns its reference, "" when
// spec has none.
func (s *Service) seal(ctx context.Context, spec Spec) (string, error) {
	secret := push.Secret{Credentials: spec.Credentials, Token: spec.Token}
	if secret.Credentials == "" && secret.Token == "" {
		return "", nil
	}
	ref, err := s.vault.Seal(ctx, secret)
	if err != nil {
		return "", fmt.Errorf("push: sealing a secret: %w", err)
	}
	return ref, nil
}

// putConfig puts the record of spec (its id set, its secret sealed as ref) on
// run's task and follows the run. On a terminal run the secret is
// discarded at once; on a failure too.
func (s *Service) putConfig(ctx context.Context, sub interop.Subject, run *interop.Run, spec Spec, ref string) (Config, error) {
	rec := push.Record{
		TaskID:    run.ID,
		ID:        spec.ID,
		URL:       spec.URL,
		Scheme:    spec.Scheme,
		SecretRef: ref,
		Subject:   sub,
		Tenant:    run.Tenant,
		Workspace: run.Workspace,
		ContextID: run.ContextID,
		After:     run.LastSequence,
		Done:      run.Status.Terminal(),
		Created:   s.now().UTC(),
	}
	if rec.Done && rec.SecretRef != "" {
		s.discard(ctx, rec.TaskID, rec.SecretRef)
		rec.SecretRef = ""
	}
	old, replaced, err := s.configs.Put(ctx, rec, s.maxPerTask)
	if err != nil {
		s.discard(ctx, rec.TaskID, rec.SecretRef)
		if errors.Is(err, push.ErrTooManyConfigs) {
			return Config{}, err
		}
		return Config{}, fmt.Errorf("push: storing a config: %w", err)
	}
	if replaced {
		s.discard(ctx, old.TaskID, old.SecretRef)
	}
	if !rec.Done {
		s.mu.Lock()
		s.watchLocked(rec, run.Status)
		s.mu.Unlock()
	}
	return configOf(&rec), nil
}

// Get returns one config of a task, or push.ErrConfigNotFound.
func (s *Service) Get(ctx context.Context, taskID, configID string) (Config, error) {
	rec, err := s.configs.Get(ctx, taskID, configID)
	if err != nil {
		return Config{}, err
	}
	return configOf(&rec), nil
}

// List returns a task's configs in registration order.
func (s *Service) List(ctx context.Context, taskID string) ([]Config, error) {
	recs, err := s.configs.List(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]Config, len(recs))
	for i := range recs {
		out[i] = configOf(&recs[i])
	}
	return out, nil
}

// Delete removes a config and discards its secret; its queued deliveries
// are dropped before their next attempt (OpenWOP RFC 0214 §A). Deleting an absent
// config succeeds (idempotent; OpenWOP RFC 0214 §E). When the task holds no config
// any more, its run is no longer followed.
func (s *Service) Delete(ctx context.Context, taskID, configID string) error {
	old, deleted, err := s.configs.Delete(ctx, taskID, configID)
	if err != nil {
		return fmt.Errorf("push: deleting a config: %w", err)
	}
	if !deleted {
		return nil
	}
	s.discard(ctx, old.TaskID, old.SecretRef)
	rest, err := s.configs.List(ctx, taskID)
	if err != nil {
		return fmt.Errorf("push: listing configs: %w", err)
	}
	if len(rest) == 0 {
		s.mu.Lock()
		if w := s.watchers[taskID]; w != nil {
			w.stop()
		}
		s.mu.Unlock()
	}
	return nil
}

// discard forgets a secret; a failure is logged (content-free) and does
// not fail the operation, since the reference is gone from the record.
func (s *Service) discard(ctx context.Context, taskID, ref string) {
	if ref == "" {
		return
	}
	err := s.contained(ctx, "the vault", taskID, func() error { return s.vault.Discard(context.WithoutCancel(ctx), ref) })
	if err != nil && !errors.Is(err, errPanicked) {
		s.log.ErrorContext(ctx, "push: discarding a secret failed", "task", taskID)
	}
}

func (s *Service) closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == stateClosing || s.state == stateClosed
}
