package hostapp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a/delegate"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// The host as an A2A client (package a2a/delegate): the remote agents the
// operator admits with -a2a-agent, which the delegate-remote workflow
// calls, and the per-call admissions of the a2a conformance seam
// (seam_a2a.go). Every card fetch and every request goes through one
// egress guard whose allowlist is -peer-allow.

// agentSpec is one -a2a-agent alias=CARD_URL.
type agentSpec struct {
	Alias   string
	CardURL string
}

// agentFlags is the repeatable -a2a-agent flag.
type agentFlags []agentSpec

func (f *agentFlags) String() string {
	if f == nil {
		return ""
	}
	parts := make([]string, len(*f))
	for i, a := range *f {
		parts[i] = a.Alias
	}
	return strings.Join(parts, ",")
}

// Set reads one alias=CARD_URL: an alias of letters, digits, '.', '_' and
// '-', and an absolute http(s) card URL without userinfo, query or
// fragment. Whether the URL may be reached is the egress guard's decision.
func (f *agentFlags) Set(v string) error {
	spec, err := parseAgentSpec(v)
	if err != nil {
		return err
	}
	for _, a := range *f {
		if a.Alias == spec.Alias {
			return fmt.Errorf("alias %q is given twice", spec.Alias)
		}
	}
	*f = append(*f, spec)
	return nil
}

var aliasGrammar = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func parseAgentSpec(v string) (agentSpec, error) {
	alias, raw, ok := strings.Cut(strings.TrimSpace(v), "=")
	if !ok || !aliasGrammar.MatchString(alias) {
		return agentSpec{}, errors.New("want alias=CARD_URL, the alias 1–64 of [A-Za-z0-9._-]")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return agentSpec{}, fmt.Errorf("agent %q: the card URL must be an absolute http(s) URL without userinfo, query or fragment", alias)
	}
	return agentSpec{Alias: alias, CardURL: raw}, nil
}

// readBearerFile reads -a2a-bearer-file: one token, surrounding space
// trimmed. Errors name the file, never its contents.
func readBearerFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") || len(tok) > 4096 {
		return "", errors.New("the file must hold one token: printable, without spaces, at most 4096 bytes")
	}
	return tok, nil
}

// The credential references of the example host's admissions.
const (
	// credentialBearer is -a2a-bearer-file's token, presented to the
	// -a2a-agent agents (only when the flag is given).
	credentialBearer = "bearer"
	// credentialSeam is what the a2a seam presents when the call asks for
	// an authenticated exchange: -a2a-bearer-file's token, else one drawn
	// per process.
	credentialSeam = "seam"
)

// peerCredentials is the example host's delegate.Credentials: static
// bearer tokens by reference. Admissions name the reference, never the
// token.
type peerCredentials map[string]string

func (c peerCredentials) Credential(_ context.Context, ref delegate.CredentialRef) (string, string, error) {
	tok, ok := c[ref.Name]
	if !ok {
		return "", "", errors.New("no such credential")
	}
	return "Bearer", tok, nil
}

// dataClassRunInputs is the one data-release class of the example host:
// what the caller put in a run's inputs, released to the agent the caller
// named (admission-boundaries §18.3).
const dataClassRunInputs = "run-inputs"

// delegation is the host's A2A client side: the operator's admissions
// (agents) and the seam's (seam, nil without -conformance-seams), both
// behind one egress guard, and a guarded HTTP client for the admission
// card reads.
type delegation struct {
	agents  *delegate.Client
	seam    *delegate.Client
	specs   []agentSpec
	guard   *egress.Guard
	http    *http.Client
	policy  *negotiate.Policy
	seamOps *seamCalls[*seamCall] // the seam calls waiting for their runs
}

// newDelegation builds the clients and pins the skills of every -a2a-agent
// from its card as it is now (one GET per agent, logged with the digests).
func newDelegation(ctx context.Context, cfg config, policy *negotiate.Policy, log *slog.Logger) (*delegation, error) {
	guard, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: cfg.PeerAllow})
	if err != nil {
		return nil, err
	}
	creds := peerCredentials{}
	if cfg.PeerBearer != "" {
		creds[credentialBearer] = cfg.PeerBearer
		creds[credentialSeam] = cfg.PeerBearer
	} else {
		creds[credentialSeam] = base64.RawURLEncoding.EncodeToString(randomSecret(32))
	}
	d := &delegation{
		specs:   cfg.Agents,
		guard:   guard,
		http:    guard.NewClient(egress.ClientOptions{RefuseRedirects: true}),
		policy:  policy,
		seamOps: newSeamCalls[*seamCall](),
	}
	deps := delegate.Deps{Policy: policy, Events: cfg.Store, Guard: guard, Credentials: creds}
	opts := delegate.Options{Logger: log, Now: cfg.Now}
	if d.agents, err = delegate.New(deps, opts); err != nil {
		return nil, err
	}
	if cfg.Seams {
		seamOpts := opts
		seamOpts.RequestTimeout = seamSendTimeout
		if d.seam, err = delegate.New(deps, seamOpts); err != nil {
			return nil, err
		}
	}
	for _, spec := range cfg.Agents {
		a, err := d.pin(ctx, spec.Alias, spec.CardURL)
		if err != nil {
			return nil, fmt.Errorf("-a2a-agent %s: %w", spec.Alias, err)
		}
		a.MayRequestInput = true
		if cfg.PeerBearer != "" {
			a.Credential = delegate.CredentialRef{Name: credentialBearer}
		}
		if err := d.agents.Admit(a); err != nil {
			return nil, err
		}
		pinned := make([]string, len(a.Skills))
		for i, s := range a.Skills {
			pinned[i] = s.ID + "=" + s.Digest
		}
		log.Info("remote agent admitted", "agent", spec.Alias, "skills", strings.Join(pinned, ","), "credential", cfg.PeerBearer != "")
	}
	return d, nil
}

// cardPinTimeout bounds one admission card read.
const cardPinTimeout = 10 * time.Second

// pin reads the agent card at cardURL through the egress guard and returns
// an admission of alias pinning every skill on it by its current
// delegate.SkillDigest: what the operator admits is the card as it is now,
// and Connect refuses it once a skill changes (admission-boundaries
// §18.3). It asks for the preferred version's card (A2A-Version), as
// Connect does. Its errors are delegate.CardError values, so
// delegate.ProjectError projects them like Connect's own.
func (d *delegation) pin(ctx context.Context, alias, cardURL string) (delegate.Admission, error) {
	fail := func(problem string, err error) (delegate.Admission, error) {
		return delegate.Admission{}, &delegate.CardError{Alias: alias, Problem: problem, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, cardPinTimeout)
	defer cancel()
	req, err := d.guard.Request(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return fail("URL refused by the egress guard", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(wire.SvcParamVersion, d.policy.Preferred())
	resp, err := d.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text names the URL, and so the peer's host
			err = ue.Err
		}
		return fail("could not be fetched", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail("request answered HTTP "+strconv.Itoa(resp.StatusCode), nil)
	}
	raw, err := egress.ReadAll(resp.Body, delegate.DefaultMaxCardBytes)
	if err != nil {
		return fail("could not be read", err)
	}
	var card struct {
		Skills []wire.AgentSkill `json:"skills"`
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		return fail("is malformed", nil)
	}
	a := delegate.Admission{Alias: alias, CardURL: cardURL, DataClasses: []string{dataClassRunInputs}}
	for i := range card.Skills {
		a.Skills = append(a.Skills, delegate.AdmittedSkill{ID: card.Skills[i].ID, Digest: delegate.SkillDigest(&card.Skills[i])})
	}
	return a, nil
}

// randomAlias names a per-call admission: never one an operator chose.
func randomAlias(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// delegateWorkflowID is the workflow that delegates one step to an agent
// admitted with -a2a-agent. It exists only when at least one is.
const delegateWorkflowID = "delegate-remote"

// delegateInputs are delegate-remote's inputs.
type delegateInputs struct {
	Agent string          `json:"agent"`
	Skill string          `json:"skill"`
	Text  string          `json:"text"`
	Data  json.RawMessage `json:"data"`
}

// delegateWorkflow is delegate-remote: Connect to the agent the inputs
// name (an admitted alias, never a URL), send one message — the data as a
// data part, the text as a text part — and follow the remote task until it
// settles; every remote input request becomes a clarification interrupt of
// this run, and only the answer a user gives there is sent. A completed
// task's admitted artifacts become this run's artifacts and its outputs.
func (d *delegation) delegateWorkflow() memstore.WorkflowDef {
	aliases := make([]string, len(d.specs))
	for i, s := range d.specs {
		aliases[i] = s.Alias
	}
	agentEnum, _ := json.Marshal(aliases) // strings always encode
	schema := `{"type":"object","properties":{` +
		`"agent":{"type":"string","enum":` + string(agentEnum) + `,"description":"The admitted remote agent (-a2a-agent alias)."},` +
		`"skill":{"type":"string","minLength":1,"description":"The admitted skill to ask for; default: the agent's only skill."},` +
		`"text":{"type":"string","description":"Sent as a text part."},` +
		`"data":{"description":"Sent as a data part (any JSON value)."}},` +
		`"required":["agent"],"additionalProperties":false}`
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          delegateWorkflowID,
			Name:        "Delegate to a remote agent",
			Description: "Sends one step to an admitted remote A2A agent and completes with the artifacts it returns.",
			InputSchema: json.RawMessage(schema),
			Tags:        []string{"a2a", "delegation"},
		},
		Run: d.runDelegate,
	}
}

func (d *delegation) runDelegate(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in delegateInputs
	if err := json.Unmarshal(rc.Inputs(), &in); err != nil { // validated against the schema
		return nil, memstore.Fault("the run's inputs could not be read")
	}
	runID := rc.RunID()
	conn, err := d.agents.Connect(ctx, runID, in.Agent)
	if err != nil {
		return nil, failProjected(runID, err)
	}
	skill := in.Skill
	if skill == "" {
		if len(conn.Admission.Skills) != 1 {
			return nil, memstore.FailWith(codeValidation, "the agent has "+strconv.Itoa(len(conn.Admission.Skills))+" admitted skills: name one in inputs.skill")
		}
		skill = conn.Admission.Skills[0].ID
	}
	asker := &inputAsker{rc: rc}
	step := delegate.Step{Skill: skill, DataClass: dataClassRunInputs, Inputs: in.Data, Decide: asker.decide}
	if in.Text != "" {
		step.Parts = []*wire.Part{wire.NewTextPart(in.Text)}
	}
	out, err := conn.Delegate(delegate.WithTraceContext(ctx, rc.Trace()), step)
	switch {
	case asker.cancelled:
		return nil, memstore.Cancel("the remote agent's input request was cancelled")
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err() // the run is being cancelled; Delegate cancelled the remote task
	case errors.Is(err, delegate.ErrAuthRequired):
		// The demo host has no way to obtain the agent's credential: it
		// gives the task up rather than leave it waiting (the cancel's
		// reconciliation goes on the run's log when it is not verified).
		_, _ = conn.Cancel(ctx, out)
		return nil, failDelegation(runID, err)
	case err != nil:
		return nil, failDelegation(runID, err)
	}
	return publishOutcome(rc, in.Agent, skill, out)
}

// Failure codes of delegate-remote runs, as delegate.ProjectError gives
// them: vendor codes (OpenWOP errors.md: <org>.<name>) for the ends of a
// delegation the registry has no code for.
const (
	codeInputDeclined      = delegate.CodeRemoteInputDeclined
	codeRemoteFailed       = delegate.CodeRemoteTaskFailed
	codeCredentialRequired = outbound.CodeCredentialRequired
)

// failDelegation ends a delegate-remote run whose delegation ended in err:
// cancelled when the agent cancelled its task, else failed with the error
// delegate.ProjectError projects it to (the library's words, never the
// peer's).
func failDelegation(runID string, err error) error {
	if errors.Is(err, delegate.ErrRemoteCancelled) {
		return memstore.Cancel("the remote agent cancelled its task")
	}
	return failProjected(runID, err)
}

// failProjected fails the run with the OpenWOP error the delegation's
// error projects to (delegate.ProjectError): its registered code and the
// library's own message, never the peer's text.
func failProjected(runID string, err error) error {
	pe := delegate.ProjectError(runID, err)
	if pe.Code == codeInternal {
		return err // logged by the store, shown as "workflow failed"
	}
	return memstore.FailWith(pe.Code, pe.Message)
}

// delegateOutputs are delegate-remote's outputs.
type delegateOutputs struct {
	Agent        string           `json:"agent"`
	Skill        string           `json:"skill"`
	RemoteTaskID string           `json:"remoteTaskId,omitempty"`
	Acceptance   string           `json:"acceptance"`
	Artifacts    []*wire.Artifact `json:"artifacts"`
}

// publishOutcome makes the admitted artifacts the run's artifacts (their
// parts' metadata left behind: peer content confers nothing) and returns
// the outputs: the artifacts in their A2A 1.0 JSON form, and the
// acceptance the library reports — execution succeeded, acceptance pending
// the host's verification (admission-boundaries §18.4).
func publishOutcome(rc *memstore.RunContext, agent, skill string, out *delegate.Outcome) (json.RawMessage, error) {
	arts := out.Artifacts
	if out.Reply != nil {
		arts = []*wire.Artifact{{ID: "reply", Parts: out.Reply.Parts}}
	}
	kept := make([]*wire.Artifact, 0, len(arts))
	for _, a := range arts {
		ha, wa, err := hostArtifact(a)
		if err != nil {
			return nil, memstore.FailWith(codeRemoteFailed, "an artifact of the remote agent has a part the host cannot keep")
		}
		if err := rc.PublishArtifact(ha, false, true); err != nil {
			return nil, err
		}
		kept = append(kept, wa)
	}
	return json.Marshal(delegateOutputs{
		Agent: agent, Skill: skill, RemoteTaskID: string(out.TaskID),
		Acceptance: string(out.Acceptance), Artifacts: kept,
	})
}

// hostArtifact converts an admitted artifact to the run's, and returns the
// copy kept in the outputs; metadata is dropped from both.
func hostArtifact(a *wire.Artifact) (interop.Artifact, *wire.Artifact, error) {
	out := interop.Artifact{ID: string(a.ID), Name: a.Name, Description: a.Description}
	kept := &wire.Artifact{ID: a.ID, Name: a.Name, Description: a.Description}
	for _, p := range a.Parts {
		if p == nil {
			return interop.Artifact{}, nil, errors.New("nil part")
		}
		hp := interop.Part{MediaType: p.MediaType, Filename: p.Filename}
		switch c := p.Content.(type) {
		case wire.Text:
			hp.Kind, hp.Text = interop.PartText, string(c)
		case wire.Raw:
			hp.Kind, hp.Raw = interop.PartRaw, []byte(c)
		case wire.URL:
			hp.Kind, hp.URL = interop.PartURL, string(c) // a reference, never fetched
		case wire.Data:
			raw, err := json.Marshal(c.Value)
			if err != nil {
				return interop.Artifact{}, nil, err
			}
			hp.Kind, hp.Data = interop.PartData, raw
		default:
			return interop.Artifact{}, nil, errors.New("unknown part")
		}
		out.Parts = append(out.Parts, hp)
		kept.Parts = append(kept.Parts, &wire.Part{Content: p.Content, MediaType: p.MediaType, Filename: p.Filename})
	}
	return out, kept, nil
}

// inputAsker answers a remote agent's input requests through this run's
// interrupts: each request suspends the run on a clarification interrupt
// (waiting-input) whose message quotes the agent's request, and only the
// answer a user gives there is sent — a fresh host decision per request,
// never an automatic one (admission-boundaries §18.4). Declined, nothing is
// sent and the remote task is cancelled; cancelled, the run ends cancelled.
type inputAsker struct {
	rc        *memstore.RunContext
	cancelled bool
}

// remoteInputSchema is the answer a user gives: one text, a flat form an
// MCP client can ask for.
const remoteInputSchema = `{"type":"object","properties":{"text":{"type":"string","title":"Answer","description":"Sent to the remote agent."}},"required":["text"],"additionalProperties":false}`

// maxQuoted bounds how much of the agent's request the interrupt quotes.
const maxQuoted = 1000

func (a *inputAsker) decide(ctx context.Context, req delegate.InputRequest) (delegate.InputAnswer, error) {
	res, err := a.rc.Interrupt(ctx, interop.Interrupt{
		Kind:         interop.InterruptClarification,
		Key:          "remote-input-" + strconv.Itoa(req.Round),
		NodeID:       "delegate",
		Message:      "The remote agent asks: " + quoteParts(req.Parts),
		ResumeSchema: json.RawMessage(remoteInputSchema),
	})
	if err != nil {
		return delegate.InputAnswer{}, err
	}
	switch res.Outcome {
	case interop.OutcomeCancel:
		a.cancelled = true
		return delegate.InputAnswer{Decline: true}, nil
	case interop.OutcomeDecline:
		return delegate.InputAnswer{Decline: true}, nil
	}
	var v struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(res.Value, &v); err != nil { // validated against the schema
		return delegate.InputAnswer{}, err
	}
	return delegate.InputAnswer{Parts: []*wire.Part{wire.NewTextPart(v.Text)}}, nil
}

// quoteParts is the text of an input request, bounded: untrusted content,
// shown to the user as the agent's words and nothing more.
func quoteParts(parts []*wire.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.Content.(wire.Text); ok {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(string(t))
		}
	}
	s := strings.ToValidUTF8(b.String(), "")
	if s == "" {
		return "(no text)"
	}
	if len(s) > maxQuoted {
		s = strings.ToValidUTF8(s[:maxQuoted], "") + "…"
	}
	return s
}

// startDelegation builds the A2A client side over the host's own A2A
// version policy (the a2a record: the floor and the preferred version
// hold for both directions) and registers its workflows in every tenant.
func (s *server) startDelegation(cfg config) (*delegation, error) {
	policy, err := s.interop.Advertisement().A2A().Policy(false, cfg.Now)
	if err != nil {
		return nil, err
	}
	d, err := newDelegation(context.Background(), cfg, policy, s.log)
	if err != nil {
		return nil, err
	}
	var defs []memstore.WorkflowDef
	if cfg.Seams {
		defs = append(defs, d.seamWorkflow())
	}
	if len(cfg.Agents) > 0 {
		defs = append(defs, d.delegateWorkflow())
	}
	for _, t := range cfg.Tenants {
		for _, def := range defs {
			if err := cfg.Workflows.Register(t, def); err != nil {
				return nil, fmt.Errorf("host: register %s for %q: %w", def.Workflow.ID, t, err)
			}
		}
	}
	return d, nil
}
