package audit_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mcphost/mcphost/host/audit"
)

func ExampleLog() {
	log := audit.New(os.Stdout, nil) // in the gateway: audit.Open(path, nil)

	end := time.Date(2025, 6, 1, 12, 0, 0, 123e6, time.UTC)
	log.Write(&audit.Record{
		Time:          end,
		Event:         audit.EventToolCall,
		Issuer:        "https://idp.example.com",
		Subject:       "alice",
		Session:       audit.SessionRef("the session id, which is never logged"),
		Server:        "github",
		Tool:          "mcp__github__create_issue",
		Decision:      audit.DecisionAllow,
		Rule:          "user scope, /etc/mcphost/config.hcl:12 allow mcp__github__*",
		Outcome:       audit.OutcomeOK,
		Duration:      182500 * time.Microsecond,
		RequestBytes:  311,
		ResponseBytes: 1204,
		Remote:        "192.0.2.7:51234",
	})
	log.Write(&audit.Record{
		Time:    end.Add(time.Second),
		Event:   audit.EventRefused,
		Outcome: audit.OutcomeUnauthorized,
		Status:  401,
		Reason:  "expired token",
		Remote:  "192.0.2.8:40022",
	})

	if err := log.Close(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"time":"2025-06-01T12:00:00.123Z","event":"tools/call","iss":"https://idp.example.com","sub":"alice","session":"c9683f6038903a14","server":"github","tool":"mcp__github__create_issue","decision":"allow","rule":"user scope, /etc/mcphost/config.hcl:12 allow mcp__github__*","outcome":"ok","duration_ms":182.5,"request_bytes":311,"response_bytes":1204,"remote":"192.0.2.7:51234"}
	// {"time":"2025-06-01T12:00:01.123Z","event":"refused","outcome":"unauthorized","status":401,"reason":"expired token","remote":"192.0.2.8:40022"}
}
