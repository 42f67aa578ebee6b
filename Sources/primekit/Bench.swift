import ArgumentParser

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the kernel and engine benchmarks and print their tables.")

    func run() async throws {}
}
