package a2apeers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// Script configures a scripted peer (StartGo, StartNode). What each task
// does is chosen by the message that starts it: see the package
// documentation for the commands.
type Script struct {
	// Tenant, when set, is the AgentInterface.tenant of every interface on
	// the card (A2A 1.0 §AgentInterface); a client echoes it in every call.
	Tenant string
	// Skills are the card's skills; nil gives DefaultSkills().
	Skills []wire.AgentSkill
	// BearerToken, when set, is declared on the card as an HTTP bearer
	// scheme and required on every protocol call: a call without
	// "Authorization: Bearer <BearerToken>" is answered 401 in the
	// binding's error shape (JSON-RPC -31401, HTTP+JSON google.rpc.Status).
	BearerToken string
	// CardSigner, when set, signs the card the peer serves: its
	// signatures member holds one JWS of CardSigner over the card's bytes
	// as otherwise served (A2A 1.0 §8.4; package a2a/cardsig). Peer.Card
	// and Peer.CardJSON are the signed card.
	CardSigner *cardsig.Signer
}

// Commands a message can carry, as its first text part or as the
// "command" field of a data part. A message with neither runs Echo.
const (
	Complete            = "complete"
	Echo                = "echo"
	Artifacts           = "artifacts" // artifacts:N
	AskInput            = "ask-input"
	AuthRequired        = "auth-required" // auth-required[:DURATION]
	Slow                = "slow"          // slow:DURATION
	Fail                = "fail"
	Reject              = "reject"
	UnknownStateCommand = "unknown-state" // unknown-state[:DURATION]
	CancelRacesComplete = "cancel-races-complete"
)

// UnknownState is the state the unknown-state command reports: no A2A
// 1.0 TaskState has this name (A2A 1.0 §4.1.3).
const UnknownState wire.TaskState = "TASK_STATE_SCRIPTED_UNKNOWN"

// Texts the scripted agent puts on the wire, for assertions.
const (
	CompletedText = "completed"                       // the Complete artifact's text
	QuestionText  = "which value should I use?"       // the AskInput status message
	AuthText      = "authorize the agent to continue" // the AuthRequired status message
	FailureText   = "scripted failure"                // the Fail status message
	RejectionText = "scripted rejection"              // the Reject status message
	ChunkFormat   = "artifact %d chunk %d"            // each Artifacts chunk's text
	ArtifactIDFmt = "artifact-%d"                     // each Artifacts artifact's id
	ResultID      = "result"                          // the artifact id of Complete, Slow, AuthRequired, UnknownState and CancelRacesComplete
	EchoID        = "echo"                            // the artifact id of Echo and of AskInput's answer
	commandsHelp  = "complete | echo | artifacts:N | ask-input | auth-required[:D] | slow:D | fail | reject | unknown-state[:D] | cancel-races-complete"
)

// DefaultSkills is the card's skill list when the Script names none.
func DefaultSkills() []wire.AgentSkill {
	return []wire.AgentSkill{{
		ID:          "scripted",
		Name:        "Scripted agent",
		Description: "Runs the command the message names: " + commandsHelp,
		Tags:        []string{"test"},
		Examples:    []string{"complete", "artifacts:3", "ask-input"},
	}}
}

// command is a parsed script command.
type command struct {
	name string
	n    int           // artifacts:N
	wait time.Duration // slow, auth-required, unknown-state; 0 waits for a cancel
	err  error         // an unreadable command fails the task with this text
}

// commandOf reads the command a message names: the first text part that
// is a command, else the first data part's "command" field, else Echo.
func commandOf(m *wire.Message) command {
	for _, p := range m.Parts {
		if s, ok := p.Content.(wire.Text); ok {
			if c, ok := parseCommand(strings.TrimSpace(string(s))); ok {
				return c
			}
		}
	}
	for _, p := range m.Parts {
		if d, ok := p.Content.(wire.Data); ok {
			if obj, ok := d.Value.(map[string]any); ok {
				if s, ok := obj["command"].(string); ok {
					if c, ok := parseCommand(s); ok {
						return c
					}
				}
			}
		}
	}
	return command{name: Echo}
}

// parseCommand reads s as a command; ok is false for text that names none.
func parseCommand(s string) (c command, ok bool) {
	name, arg, hasArg := strings.Cut(s, ":")
	c = command{name: name}
	switch name {
	case Complete, Echo, AskInput, Fail, Reject, CancelRacesComplete:
		if hasArg {
			c.err = fmt.Errorf("%s takes no argument", name)
		}
	case Artifacts:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			c.err = fmt.Errorf("artifacts:N needs N >= 1, got %q", arg)
		}
		c.n = n
	case Slow, AuthRequired, UnknownStateCommand:
		if !hasArg && name != Slow {
			break
		}
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			c.err = fmt.Errorf("%s:DURATION needs a positive Go duration, got %q", name, arg)
		}
		c.wait = d
	default:
		return command{}, false
	}
	return c, true
}
