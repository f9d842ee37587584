package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// report is the bench's result.
type report struct {
	Config reportConfig `json:"config"`
	Rows   []row        `json:"rows"`
}

type reportConfig struct {
	Requests    int `json:"requests"`
	Clients     int `json:"clients"`
	Rounds      int `json:"rounds"`
	ListSize    int `json:"listSize"`
	Subscribers int `json:"subscribers"`
}

// row is one scenario against one server. Durations are nanoseconds in
// JSON; a ratio is 0 where there is nothing to compare with.
type row struct {
	Scenario string        `json:"scenario"`
	Server   string        `json:"server"`
	N        int           `json:"n"`
	Errors   int           `json:"errors"`
	FirstErr string        `json:"firstError,omitempty"`
	PerSec   float64       `json:"perSecond"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	// CPU is the server process's own CPU time per request.
	CPU time.Duration `json:"cpuPerRequest"`
	// ClientCPU is the load generator's (this process's) CPU time per
	// request: what the clients spend to drive the server.
	ClientCPU time.Duration `json:"clientCpuPerRequest"`
	// VsSDK is PerSec over the SDK stack's (a2ago for A2A, gosdk for
	// MCP): above 1 the server is faster.
	VsSDK float64 `json:"vsSDK"`
	// CPUVsBare is CPU over the bare server's: what the server costs per
	// request as a multiple of the wire work alone.
	CPUVsBare float64 `json:"cpuVsBare"`
	// SDKCPUVs is the SDK stack's CPU over CPU: above 1 the server spends
	// less per request than the SDK stack.
	SDKCPUVs float64 `json:"sdkCpuVs"`
}

func newRow(server string, s sample) row {
	r := row{Server: server, N: s.n, Errors: s.errs}
	if s.firstErr != nil {
		r.FirstErr = s.firstErr.Error()
	}
	if s.wall > 0 {
		r.PerSec = float64(s.n) / s.wall.Seconds()
	}
	if s.n > 0 {
		r.CPU = s.cpu / time.Duration(s.n)
		r.ClientCPU = s.clientCPU / time.Duration(s.n)
	}
	if len(s.lat) > 0 {
		r.P50 = percentile(s.lat, 0.50)
		r.P99 = percentile(s.lat, 0.99)
	}
	return r
}

// add appends a scenario's rows with their ratios to bare and to the SDK
// stack of the scenario's protocol.
func (rep *report) add(sc string, rows []row) {
	var sdk float64
	var bareCPU, sdkCPU time.Duration
	for _, r := range rows {
		switch r.Server {
		case "bare":
			bareCPU = r.CPU
		case "a2ago", "gosdk":
			sdk, sdkCPU = r.PerSec, r.CPU
		}
	}
	for _, r := range rows {
		r.Scenario = sc
		if sdk > 0 {
			r.VsSDK = r.PerSec / sdk
		}
		if r.CPU > 0 && bareCPU > 0 {
			r.CPUVsBare = float64(r.CPU) / float64(bareCPU)
		}
		if r.CPU > 0 {
			r.SDKCPUVs = float64(sdkCPU) / float64(r.CPU)
		}
		rep.Rows = append(rep.Rows, r)
	}
}

// failures names the rows with wrong answers, "" when there are none.
func (rep *report) failures() string {
	var bad []string
	for _, r := range rep.Rows {
		if r.Errors > 0 {
			bad = append(bad, fmt.Sprintf("%s/%s: %d (first: %s)", r.Scenario, r.Server, r.Errors, r.FirstErr))
		}
	}
	return strings.Join(bad, "; ")
}

func (rep *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func (rep *report) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tserver\tn\treq/s\tp50\tp99\tcpu/req\tclient\t×sdk\tcpu÷bare\tsdk÷cpu\terrors\t")
	for _, r := range rep.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Scenario, r.Server, r.N,
			r.PerSec, dur(r.P50), dur(r.P99), dur(r.CPU), dur(r.ClientCPU), ratio(r.VsSDK), ratio(r.CPUVsBare), ratio(r.SDKCPUVs), r.Errors)
	}
	return tw.Flush()
}

func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	default:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}
