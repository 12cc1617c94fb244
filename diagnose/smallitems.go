package diagnose

// smallUIDs is the most items a workload's small lookups (copies by UID, evidence objects,
// Services taken) scan in a list before they take a map: most workloads have a handful of
// copies, and a map per workload for each question cost more than the questions.
const smallUIDs = 16
