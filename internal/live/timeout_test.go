package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAnAnswerThatNeverEndsIsNotNoAnswer: a server that sends the head of every list and then
// nothing more answered; the read says its answer did not end in time, not that it gave none.
func TestAnAnswerThatNeverEndsIsNotNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	start := time.Now()
	_, err := hostileSourceWithTimeout(t, srv, "1s").Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "began to answer, but its answer did not end within 1s") {
		t.Errorf("err = %v, want the answer that did not end named", err)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("the read took %v, want about the 1s bound", took)
	}
}
