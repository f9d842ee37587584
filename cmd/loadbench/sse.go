package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// streamEvent is one A2A StreamResponse (a2a.proto): exactly one of
// its members is set. Only what the bench checks is decoded.
type streamEvent struct {
	Task *struct {
		ID string `json:"id"`
	} `json:"task"`
	ArtifactUpdate *struct {
		TaskID   string `json:"taskId"`
		Artifact struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"artifact"`
	} `json:"artifactUpdate"`
	StatusUpdate *struct {
		TaskID string `json:"taskId"`
	} `json:"statusUpdate"`
	Message json.RawMessage `json:"message"`
}

// taskID is the task the event is about, "" for a message.
func (ev *streamEvent) taskID() string {
	switch {
	case ev.Task != nil:
		return ev.Task.ID
	case ev.ArtifactUpdate != nil:
		return ev.ArtifactUpdate.TaskID
	case ev.StatusUpdate != nil:
		return ev.StatusUpdate.TaskID
	}
	return ""
}

// subscribe opens a SubscribeToTask stream on s for task and calls on for
// each event until the stream ends, ctx ends, or on returns false.
func subscribe(ctx context.Context, client *http.Client, s *server, task string, on func(streamEvent) bool) error {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"` + task + `"}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.a2aURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = a2aHeader(s.auth)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("SubscribeToTask: HTTP %d: %s", resp.StatusCode, b)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for lines.Scan() {
		data, ok := bytes.CutPrefix(lines.Bytes(), []byte("data:"))
		if !ok {
			continue // id:, event:, comments and the blank line ending an event
		}
		var ev streamEvent
		if err := result(1, http.StatusOK, bytes.TrimSpace(data), &ev); err != nil {
			return fmt.Errorf("SubscribeToTask event: %w", err)
		}
		if !on(ev) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return lines.Err()
}

// startHeld starts a task of the held skill on s, answered at once
// (returnImmediately), and returns its id; s.update drives it and
// s.release lets it complete.
func startHeld(client *http.Client, s *server, i int) (string, error) {
	if err := s.arm(); err != nil {
		return "", err
	}
	var r struct{ Task *struct{ ID string } }
	if err := call(client, request{s.a2aURL, a2aHeader(s.auth), sendBody(0, s.tenant, fmt.Sprintf("%s-held-%d", s.name, i), holdSkill, true)}, &r); err != nil {
		return "", fmt.Errorf("%s: start the held task: %w", s.name, err)
	}
	if r.Task == nil || r.Task.ID == "" {
		return "", fmt.Errorf("%s: the held task has no id", s.name)
	}
	return r.Task.ID, nil
}
