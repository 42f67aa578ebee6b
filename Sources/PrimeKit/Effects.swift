/// Work collected while the engine holds its locks (continuations to resume, callbacks to call, workers to wake)
/// and run after the locks are released, so user code never runs under an engine lock.
struct Effects: Sendable {
    private var actions: [@Sendable () -> Void] = []

    mutating func add(_ action: @escaping @Sendable () -> Void) {
        actions.append(action)
    }

    var isEmpty: Bool { actions.isEmpty }

    func run() {
        for action in actions { action() }
    }
}
