import ArgumentParser
import PrimeKit

@main
struct PrimekitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "primekit", version: "0.1.0")
    func run() async throws {}
}
