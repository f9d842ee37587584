package mcp

// The mount's side of its optional extension (Options.Extension, built by
// package mcp/ext from the host's extension points): the methods it
// serves, tools/call of its native tools, and what the mount lends it
// while it serves a request. The extension answers with result objects
// and errors; guarding the request, owning a run a native tool hands off
// to and writing every answer stay here.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// Extension serves what a host offers beside its workflows: tools that
// are not workflows, prompts, resources and argument completion. Package
// mcp/ext builds one from the host's extension points; its methods are
// this module's own contract.
type Extension interface {
	mount.Extension
}

// extend answers a prompts, resources or completion method through the
// extension.
func (s *Server) extend(ctx context.Context, c *call) (answer, error) {
	return bodyAnswer(s.opts.Extension.Serve(ctx, s.env(), c.method, &c.Call))
}

// bodyAnswer is body as an answer, or err when it is set.
func bodyAnswer(body []byte, err error) (answer, error) {
	if err != nil {
		return answer{}, err
	}
	return answer{body: body}, nil
}

// nativeCall serves tools/call of a native tool: the extension runs the
// host's tool with a context that notifications/cancelled of the same
// Subject ends (inflight.go), and answers with a result, a hand-off to a
// run, or the run grant of an earlier hand-off whose run asked for input.
func (s *Server) nativeCall(ctx context.Context, inv *invocation) (answer, error) {
	c := inv.c
	digest, derr := inv.digest()
	if derr != nil {
		return answer{}, derr
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer s.inflight.addCall(flightKey(c.r, c.Subject, c.id), cancel)()
	out, err := s.opts.Extension.CallTool(callCtx, s.env(), &mount.ToolCall{
		Call: &c.Call, Name: inv.tool.name, Arguments: inv.params.args, Digest: digest,
		Round: inv.params.Round, Notifier: c.notifier,
	})
	switch {
	case ctx.Err() != nil:
		return answer{}, errNoAnswer // the client is gone; nobody reads an answer
	case err != nil:
		return answer{}, err
	case out.Resume != nil:
		return s.resumeRun(ctx, inv, *out.Resume)
	case out.Handoff != nil:
		return s.handoff(ctx, inv, out.Handoff)
	}
	return answer{body: out.Result}, nil
}

// handoff continues a native call as a run of one of the caller's
// workflows and answers it as a call of that workflow would be answered,
// with the native tool's task support.
func (s *Server) handoff(ctx context.Context, inv *invocation, h *mount.Handoff) (answer, error) {
	c := inv.c
	inputs := h.Inputs
	if len(inputs) == 0 {
		inputs = []byte(`{}`)
	}
	run, _, err := s.deps.Store.CreateRun(context.WithoutCancel(ctx), c.Subject, interop.CreateRunRequest{
		WorkflowID:    h.WorkflowID,
		Inputs:        inputs,
		Transport:     interop.TransportMCP,
		Trace:         c.trace,
		TrustBoundary: interop.TrustUntrusted,
	})
	if err != nil {
		if errors.Is(err, interop.ErrNotFound) {
			// The host named a workflow the caller cannot run: its bug.
			return answer{}, fmt.Errorf("mcp: native tool %q handed off to an unknown workflow: %w", inv.tool.name, err)
		}
		return answer{}, createRunError(err)
	}
	s.own(c, run.ID)
	return s.respond(ctx, inv, run, h.Round)
}

// env is what the mount lends its extension.
func (s *Server) env() mount.Env { return (*lender)(s) }

// lender is the Server as the extension's mount.Env.
type lender Server

func (l *lender) OpenState(ctx context.Context, sub interop.Subject, state string, digest [32]byte, runs bool) (sealed.Claims, error) {
	claims, err := (*Server)(l).openState(ctx, sub, state, digest)
	if err == nil && claims.RunID != "" && !runs {
		return claims, errInvalidState // a prompt or a read never resumes a run
	}
	return claims, err
}

func (l *lender) Seal(sub interop.Subject, g sealed.Grant) (string, error) {
	return l.deps.Sealer.Seal(sub, g)
}

func (l *lender) ListTTLMs() int64 { return (*Server)(l).listTTLMs() }

func (l *lender) Logger() *slog.Logger { return l.log }

func (l *lender) LogPanic(ctx context.Context, where string, v any) {
	(*Server)(l).logPanic(ctx, where, v)
}
