package kubeletsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// recorder writes core/v1 Events the way client-go's legacy recorder does for one source
// (component kubelet, host the node): identical events (object, fieldPath, type, reason,
// message) are counted into one Event, and a token bucket per object and type (burst 25, one
// token per 5 simulated minutes) drops updates, so count and lastTimestamp lag like on a real
// cluster. Writes are asynchronous and in order.
type recorder struct {
	cs        kubernetes.Interface
	component string
	host      string
	scale     float64
	logf      func(string, ...any)

	mu      sync.Mutex
	last    int64 // last name suffix; names must be unique within a sync
	seen    map[eventKey]*eventRecord
	buckets map[bucketKey]*bucket
	queue   chan func(context.Context)
}

type eventKey struct {
	uid       string
	fieldPath string
	etype     string
	reason    string
	message   string
}

type bucketKey struct{ uid, etype string }

type eventRecord struct {
	name  string
	first time.Time
	count int32
}

type bucket struct {
	tokens float64
	last   time.Time
}

const (
	spamBurst    = 25
	spamInterval = 5 * time.Minute
)

func newRecorder(cs kubernetes.Interface, component, host string, scale float64, logf func(string, ...any)) *recorder {
	return &recorder{
		cs: cs, component: component, host: host, scale: scale, logf: logf,
		seen: map[eventKey]*eventRecord{}, buckets: map[bucketKey]*bucket{},
		queue: make(chan func(context.Context), 1024),
	}
}

// run writes queued events until ctx ends.
func (r *recorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-r.queue:
			f(ctx)
		}
	}
}

// podRef is the involvedObject of a pod event; container is "" for pod-level events.
func podRef(pod *corev1.Pod, container string, init bool) corev1.ObjectReference {
	ref := corev1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion,
	}
	if container != "" {
		if init {
			ref.FieldPath = fmt.Sprintf("spec.initContainers{%s}", container)
		} else {
			ref.FieldPath = fmt.Sprintf("spec.containers{%s}", container)
		}
	}
	return ref
}

// event records one occurrence at now.
func (r *recorder) event(ref corev1.ObjectReference, etype, reason, message string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := eventKey{string(ref.UID), ref.FieldPath, etype, reason, message}
	rec := r.seen[key]
	isNew := rec == nil
	if isNew {
		r.last = max(r.last+1, now.UnixNano())
		rec = &eventRecord{name: fmt.Sprintf("%s.%x", ref.Name, r.last), first: now}
		r.seen[key] = rec
	}
	rec.count++
	bk := bucketKey{string(ref.UID), etype}
	b := r.buckets[bk]
	if b == nil {
		b = &bucket{tokens: spamBurst, last: now}
		r.buckets[bk] = b
	}
	refill := now.Sub(b.last).Seconds() * r.scale / spamInterval.Seconds()
	b.tokens = min(spamBurst, b.tokens+refill)
	b.last = now
	if b.tokens < 1 {
		return
	}
	b.tokens--
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: rec.name, Namespace: ref.Namespace},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		Source:              corev1.EventSource{Component: r.component, Host: r.host},
		FirstTimestamp:      metav1.NewTime(rec.first),
		LastTimestamp:       metav1.NewTime(now),
		Count:               rec.count,
		Type:                etype,
		ReportingController: r.component,
		ReportingInstance:   r.host,
	}
	create := isNew || rec.count == 1
	r.enqueue(func(ctx context.Context) {
		events := r.cs.CoreV1().Events(ev.Namespace)
		if !create {
			old, err := events.Get(ctx, ev.Name, metav1.GetOptions{})
			if err == nil {
				old.Count, old.LastTimestamp, old.InvolvedObject = ev.Count, ev.LastTimestamp, ev.InvolvedObject
				if _, err = events.Update(ctx, old, metav1.UpdateOptions{FieldManager: r.component}); err == nil {
					return
				}
			}
		}
		if _, err := events.Create(ctx, ev, metav1.CreateOptions{FieldManager: r.component}); err != nil && ctx.Err() == nil {
			r.logf("kubeletsim: event %s/%s %s: %v", ev.Namespace, ev.Name, reason, err)
		}
	})
}

func (r *recorder) enqueue(f func(context.Context)) {
	select {
	case r.queue <- f:
	default:
		r.logf("kubeletsim: event queue full, dropping an event")
	}
}

// schedulerRecorder writes events.k8s.io/v1 Events as kube-scheduler's new-style recorder does:
// reportingController default-scheduler, eventTime, no source; a repeat of the same event becomes
// a series written at count 2 and then only on its 30-minute refresh.
type schedulerRecorder struct {
	cs       kubernetes.Interface
	instance string
	scale    float64
	logf     func(string, ...any)

	mu     sync.Mutex
	last   int64
	series map[eventKey]*seriesRecord
	queue  chan func(context.Context)
}

type seriesRecord struct {
	name     string
	count    int32
	lastSent time.Time
}

const seriesRefresh = 30 * time.Minute

func newSchedulerRecorder(cs kubernetes.Interface, instance string, scale float64, logf func(string, ...any)) *schedulerRecorder {
	return &schedulerRecorder{
		cs: cs, instance: instance, scale: scale, logf: logf,
		series: map[eventKey]*seriesRecord{}, queue: make(chan func(context.Context), 1024),
	}
}

func (r *schedulerRecorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-r.queue:
			f(ctx)
		}
	}
}

func (r *schedulerRecorder) event(pod *corev1.Pod, etype, reason, action, note string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := eventKey{string(pod.UID), "", etype, reason, note}
	s := r.series[key]
	var ev *eventsv1.Event
	switch s {
	case nil:
		r.last = max(r.last+1, now.UnixNano())
		s = &seriesRecord{name: fmt.Sprintf("%s.%x", pod.Name, r.last), count: 1, lastSent: now}
		r.series[key] = s
		ev = &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: s.name, Namespace: pod.Namespace},
			EventTime:           metav1.NewMicroTime(now),
			ReportingController: "default-scheduler",
			ReportingInstance:   r.instance,
			Action:              action,
			Reason:              reason,
			Type:                etype,
			Regarding: corev1.ObjectReference{
				Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace,
				Name: pod.Name, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			},
			Note: note,
		}
	default:
		s.count++
		refresh := time.Duration(float64(seriesRefresh) / r.scale)
		if s.count != 2 && now.Sub(s.lastSent) < refresh {
			return
		}
		s.lastSent = now
	}
	name, count := s.name, s.count
	r.enqueue(func(ctx context.Context) {
		events := r.cs.EventsV1().Events(pod.Namespace)
		if ev != nil {
			if _, err := events.Create(ctx, ev, metav1.CreateOptions{FieldManager: "kube-scheduler"}); err != nil && ctx.Err() == nil {
				r.logf("kubeletsim: scheduler event %s: %v", name, err)
			}
			return
		}
		old, err := events.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return
		}
		old.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(now)}
		if _, err := events.Update(ctx, old, metav1.UpdateOptions{FieldManager: "kube-scheduler"}); err != nil && ctx.Err() == nil {
			r.logf("kubeletsim: scheduler event %s: %v", name, err)
		}
	})
}

func (r *schedulerRecorder) enqueue(f func(context.Context)) {
	select {
	case r.queue <- f:
	default:
		r.logf("kubeletsim: scheduler event queue full, dropping an event")
	}
}
