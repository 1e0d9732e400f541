namespace Flagstore.Tests
{
    public static class ScenarioTests
    {
        public static void Register()
        {
        }
    }
}
